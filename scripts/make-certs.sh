#!/usr/bin/env bash
# Makes a development CA, one certificate per process and role, and an admin
# and a client token, so TLS can be turned on in minutes:
#   scripts/make-certs.sh [--pairs N] [out-dir] [host | leaf=host ...]
# Writes into out-dir (default ./certs), every file 0600:
#   ca.crt ca.key                  the CA (basicConstraints CA:TRUE, keyCertSign)
#   router.crt router.key          spiffe://tally/router; serverAuth + clientAuth
#   node-<i>a/b.crt .key           one key per node, pair i's first and second
#                                  (node-0a node-0b node-1a node-1b for the
#                                  default 2 pairs, the compose service names);
#                                  spiffe://tally/node/<name>; serverAuth + clientAuth
#   client.crt client.key          spiffe://tally/client; clientAuth only, no host names
#   etcd-ca.crt etcd-ca.key        a second CA, for etcd alone: etcd trusts every
#                                  certificate its CA signed to rewrite the
#                                  directory, so that CA signs only these two:
#   etcd.crt etcd.key              etcd's server certificate (localhost, 127.0.0.1, etcd)
#   etcd-client.crt etcd-client.key  the routers' client certificate for etcd
#   admin.token client.token
# The role is the URI subject alternative name: nodes serve ShardNode only to
# router and node certificates (src/common/grpc/peer-role.ts). The router and each
# node are valid for localhost, 127.0.0.1 and their compose service name
# (the router for both of compose's: router, router-2); a bare `host`
# argument is added to the router and every node, `leaf=host` (e.g.
# node-0a=10.0.0.5) to that one. For development only: the CA key sits
# next to the certificates (docs/operations.md, "Certificates for real hosts").
set -euo pipefail
# Before anything is written: keys, tokens and the directory are the owner's alone.
umask 077

pairs=2
if [[ "${1:-}" == "--pairs" ]]; then
  pairs="${2:-}"
  shift 2 || true
fi
if ! [[ "$pairs" =~ ^[1-9][0-9]*$ ]] || ((pairs > 64)); then
  echo "make-certs.sh: --pairs wants 1..64 (got '$pairs')" >&2
  exit 2
fi
out="${1:-./certs}"
shift || true

nodes=()
for ((index = 0; index < pairs; index++)); do nodes+=("node-${index}a" "node-${index}b"); done

san_of_host() {
  if [[ "$1" =~ ^[0-9.]+$ || "$1" == *:* ]]; then echo "IP:$1"; else echo "DNS:$1"; fi
}

# Extra names: for every server leaf, or for one (leaf=host). Plain lists,
# not associative arrays: macOS still ships bash 3.
shared=""
specific=()
for arg in "$@"; do
  if [[ "$arg" == *=* ]]; then
    leaf="${arg%%=*}"
    if [[ "$leaf" != router && " ${nodes[*]} " != *" $leaf "* ]]; then
      echo "make-certs.sh: no server certificate named '$leaf' (router, ${nodes[*]})" >&2
      exit 2
    fi
    specific+=("$leaf=$(san_of_host "${arg#*=}")")
  else
    shared="$shared,$(san_of_host "$arg")"
  fi
done
extra_of() {
  local sans="$shared" item
  for item in ${specific[@]+"${specific[@]}"}; do
    if [[ "${item%%=*}" == "$1" ]]; then sans="$sans,${item#*=}"; fi
  done
  echo "$sans"
}

mkdir -p "$out"
cd "$out"

conf="$(mktemp)"
trap 'rm -f "$conf" ./*.csr' EXIT
cat > "$conf" <<'EOF'
[req]
distinguished_name = dn
prompt = no
[dn]
CN = unused
[ca]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
EOF

openssl req -x509 -newkey rsa:2048 -nodes -days 825 -config "$conf" -extensions ca \
  -subj "/O=tally/CN=tally-dev-ca" -keyout ca.key -out ca.crt >/dev/null 2>&1
openssl req -x509 -newkey rsa:2048 -nodes -days 825 -config "$conf" -extensions ca \
  -subj "/O=tally/CN=tally-dev-etcd-ca" -keyout etcd-ca.key -out etcd-ca.crt >/dev/null 2>&1

# make_leaf name uri extendedKeyUsage [sans] [ca]
make_leaf() {
  local name="$1" uri="$2" usage="$3" sans="${4:-}" ca="${5:-ca}"
  openssl req -newkey rsa:2048 -nodes -subj "/O=tally/CN=$name" -keyout "$name.key" -out "$name.csr" >/dev/null 2>&1
  {
    echo "[leaf]"
    echo "basicConstraints = critical,CA:FALSE"
    echo "keyUsage = critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage = $usage"
    echo "subjectKeyIdentifier = hash"
    echo "authorityKeyIdentifier = keyid"
    echo "subjectAltName = URI:$uri$sans"
  } > "$name.ext"
  openssl x509 -req -in "$name.csr" -CA "$ca.crt" -CAkey "$ca.key" -set_serial "0x$(openssl rand -hex 16)" -days 825 \
    -extfile "$name.ext" -extensions leaf -out "$name.crt" >/dev/null 2>&1
  rm -f "$name.csr" "$name.ext"
}

local_sans=",DNS:localhost,IP:127.0.0.1"
make_leaf router "spiffe://tally/router" "serverAuth,clientAuth" "$local_sans,DNS:router,DNS:router-2$(extra_of router)"
for name in "${nodes[@]}"; do
  make_leaf "$name" "spiffe://tally/node/$name" "serverAuth,clientAuth" "$local_sans,DNS:$name$(extra_of "$name")"
done
make_leaf client "spiffe://tally/client" "clientAuth"
make_leaf etcd "spiffe://tally/etcd" "serverAuth" "$local_sans,DNS:etcd" etcd-ca
make_leaf etcd-client "spiffe://tally/router" "clientAuth" "" etcd-ca

openssl rand -hex 32 > admin.token
openssl rand -hex 32 > client.token
# A directory that already existed keeps its mode, and files it held keep theirs.
chmod 600 ca.crt ca.key router.* client.* node-* etcd-ca.* etcd.* etcd-client.* admin.token client.token
echo "wrote $(pwd): ca, router, ${nodes[*]}, client, etcd-ca, etcd and etcd-client (.crt and .key each), admin.token, client.token"
