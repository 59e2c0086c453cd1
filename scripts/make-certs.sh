#!/usr/bin/env bash
# Makes a development CA and certificates for a Tally cluster with openssl,
# plus an admin token and a client token, so TLS can be turned on in
# minutes:  scripts/make-certs.sh [out-dir] [extra-host ...]
# Every certificate is valid for localhost, 127.0.0.1, the docker-compose
# service names and any extra hosts given. For development only: the CA key
# sits next to the certificates.
set -euo pipefail
out="${1:-./certs}"
shift || true
mkdir -p "$out"
cd "$out"

sans="DNS:localhost,IP:127.0.0.1,DNS:router,DNS:node-0a,DNS:node-0b,DNS:node-1a,DNS:node-1b"
for host in "$@"; do
  if [[ "$host" =~ ^[0-9.]+$ ]]; then sans="$sans,IP:$host"; else sans="$sans,DNS:$host"; fi
done

openssl req -x509 -newkey rsa:2048 -nodes -days 825 -subj "/CN=tally-dev-ca" \
  -keyout ca.key -out ca.crt >/dev/null 2>&1

make_cert() {
  local name="$1"
  openssl req -newkey rsa:2048 -nodes -subj "/CN=$name" -keyout "$name.key" -out "$name.csr" >/dev/null 2>&1
  printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth,clientAuth\n' "$sans" > "$name.ext"
  openssl x509 -req -in "$name.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 825 \
    -extfile "$name.ext" -out "$name.crt" >/dev/null 2>&1
  rm -f "$name.csr" "$name.ext"
}

for name in router node client; do make_cert "$name"; done
openssl rand -hex 32 > admin.token
openssl rand -hex 32 > client.token
chmod 600 ./*.key ./*.token
echo "wrote $(pwd): ca.crt, router.{crt,key}, node.{crt,key}, client.{crt,key}, admin.token, client.token"
