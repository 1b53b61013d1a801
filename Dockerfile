# One image with both programs: portico-controller (node dist/controller/main.js, bundled) and portico-speaker
# (node dist/speaker/main.js, with the packet-socket addon). Build from the repository root:
#   docker build -t <registry>/portico:<tag> .
# The manifests run it as user 65532 (the controller) or as root with CAP_NET_RAW only (the speaker).
ARG NODE_VERSION=24

# Compiles TypeScript to dist/, bundles the controller (rolldown.config.ts: dist/controller/main.js and its
# chunks, which take less memory than the modules they hold loaded one by one) and builds the speaker's addon.
# The full node image carries python3, make and a C compiler for node-gyp, and Node's headers, so nothing is
# downloaded but the npm packages.
FROM node:${NODE_VERSION}-bookworm AS build
WORKDIR /src
COPY package.json package-lock.json .npmrc ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json rolldown.config.ts ./
COPY controller/ controller/
COPY providers/ providers/
COPY speaker/ speaker/
COPY shared/ shared/
RUN npm run build
RUN speaker/native/build.sh --force

# Production dependencies only, without install scripts (none of them needs one).
FROM node:${NODE_VERSION}-bookworm-slim AS dependencies
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

# The same Debian release as the build stage, so the addon finds the C library it was linked against.
FROM node:${NODE_VERSION}-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=dependencies /app/node_modules ./node_modules
COPY package.json ./
COPY --from=build /src/dist ./dist
# Where speaker/io/addon.ts looks for the addon next to the compiled speaker.
COPY --from=build /src/speaker/native/build/Release/portico_packet.node ./dist/speaker/native/build/Release/
USER 65532:65532
ENTRYPOINT ["node"]
CMD ["/app/dist/controller/main.js", "--help"]
