# One image for every Tally process: `router`, `node`, or any `tally` CLI
# command (the default). Build stage compiles the native SQLite binding and
# the TypeScript (npm run build: src/ to dist/); the runtime stage carries
# only dist/, the protos, bin/ and production dependencies, and runs plain
# JavaScript (no tsx). Node.js 22, the LTS line the image is built and
# supported on; package.json's engines (>=20) still admits 20, which the
# test machines run.
FROM node:22-bookworm-slim AS build
WORKDIR /app
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY proto ./proto
COPY src ./src
COPY bin ./bin
RUN npm run build && npm prune --omit=dev

FROM node:22-bookworm-slim AS runtime
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/proto ./proto
COPY --from=build /app/dist ./dist
COPY --from=build /app/bin ./bin
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
ENTRYPOINT ["/app/bin/docker-entrypoint.sh"]
CMD ["--help"]
