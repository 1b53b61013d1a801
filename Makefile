# Portico's two everyday commands: `make test` and `make demo`. Both set up everything they need on a fresh
# machine (Node.js 24, npm packages, kube-apiserver/etcd and kustomize built from the Go module proxy, moto
# from PyPI, arping and ndisc6 from Debian, the speaker's packet-socket addon) and cache it under .cache/, so
# the second run starts in seconds.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

# When make started: `make test` prints its whole time from here, set-up included (a cold run's too).
TEST_STARTED := $(shell date +%s)
NODE_DIR := $(shell test/env/node.sh)
ifeq ($(NODE_DIR),)
$(error could not find or install Node.js 24 (see the message above))
endif
export PATH := $(NODE_DIR):$(PATH)

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

.PHONY: help deps env test test-unit test-e2e test-conformance test-chaos check docs demo bench bench-aws bench-aws-pass bench-moto bench-speaker bench-bgp bench-azure bench-metal bench-cluster bench-cluster-changes bench-cluster-clouds bench-memory bench-memory-floor build clean
help:
	@echo "make test   run every test (unit + integration on a real kube-apiserver and the AWS emulator)"
	@echo "make demo   start the local environment and show Portico at work"
	@echo "make check  type-check, lint and format check"
	@echo "make test-e2e   the end-to-end suite alone: Portico's image on a local cluster of real kubelets"
	@echo "make test-conformance  Kubernetes' own LoadBalancer e2e tests against Portico: bare metal (L2, BGP), EKS, AKS"
	@echo "make test-chaos  the fault tests at size (controller SIGKILLs, cloud faults, restarts)"
	@echo "make bench  measure cloud calls and convergence time; results in bench/results/"

deps: node_modules/.installed

env: deps
	@test/env/setup.sh all >/dev/null
	@test/env/kustomize.sh >/dev/null
	@test/env/packages.sh
	@PORTICO_BUILD_LOG=$${PORTICO_CACHE:-.cache}/build-speaker-addon.log speaker/native/build.sh

# Unit and integration tests first, then the end-to-end suite on the local cluster (its own control plane,
# three kubelet nodes and Portico's image; root only), so the two never compete for the machine.
# As root, what the end-to-end suite will need (the local cluster's images, and e2e.test with its images for the
# conformance subset) is built in the background at the lowest priority while the tests before it run: the tests
# get the CPU first, and their own calls of these scripts wait on the scripts' locks and find the results cached.
# The exit trap stops that build if it is still going; it has usually finished, so the kill finds no process and
# must not fail the recipe (which runs under -e).
test: env
	@ahead=; trap '[ -z "$$ahead" ] || kill -- -$$ahead 2>/dev/null || true; echo "make test: $$(( ($$(date +%s) - $(TEST_STARTED)) / 60 )) min $$(( ($$(date +%s) - $(TEST_STARTED)) % 60 )) s in all, set-up included"' EXIT; \
	  if [ "$$(id -u)" -eq 0 ]; then \
	    setsid nice -n 19 bash -c 'test/env/images.sh && test/env/k8s-e2e.sh' >/dev/null 2>"$${PORTICO_CACHE:-.cache}/build-ahead.log" & ahead=$$!; \
	  fi; \
	  npx vitest run --project unit --project integration && npx vitest run --project e2e

test-e2e: env
	npx vitest run --project e2e

# Kubernetes' own sig-network [Feature:LoadBalancer] tests, unmodified, by e2e.test of the cluster's release
# (built from the Go module proxy with agnhost and CoreDNS), in four set-ups: bare metal from a client on the LAN
# (L2) and from behind a BGP router, the eks and aks overlays with their emulators and edges from the edges'
# internet clients; results in bench/results/conformance.json and docs/conformance.md's table. About an hour a set-up,
# so not part of `make test`. K8S_E2E_SETUPS=eks,aks runs some set-ups, K8S_E2E_FOCUS=<regexp> some tests.
test-conformance: env
	node test/k8s-e2e/run.ts

# The fault tests at size: 100 Services, the controller killed 10 times (seeded: CHAOS_SEED=N repeats a run).
test-chaos: env
	CHAOS_SERVICES=$${CHAOS_SERVICES:-100} CHAOS_KILLS=$${CHAOS_KILLS:-10} npx vitest run --project integration test/chaos

test-unit: deps
	npx vitest run --project unit

# A Helm chart's templates are Go templates that make YAML, not YAML, so prettier leaves them alone.
check: deps
	npx tsc -p tsconfig.json
	npx eslint .
	npx depcruise controller speaker providers shared --config .dependency-cruiser.cjs
	npx prettier --check . '!manifests/charts/*/templates/**'

# The annotation reference is generated from the catalog the controller checks Services against.
docs: deps
	node controller/cli/porticoctl.ts annotations -o markdown > docs/annotations.md
	npx prettier --write docs/annotations.md >/dev/null
	node test/docs/metricsReference.ts > docs/metrics.md
	npx prettier --write docs/metrics.md >/dev/null
	node test/docs/configReference.ts > docs/configuration.md
	npx prettier --write docs/configuration.md >/dev/null

demo: env
	node test/env/demo.ts

# Each benchmark prints its figures with the command that reproduced them and keeps them in bench/results/.
bench: bench-aws bench-moto bench-azure bench-metal bench-speaker bench-bgp bench-cluster bench-memory bench-memory-floor

# Portico on the local cluster: set-up times, what a client sees when the announcing node is lost, during
# rollouts, a drain and Portico's own upgrade (new and long-lived connections), and the clouds' data path (first answered request, failures during a rolling update) through the emulated edge.
bench-cluster: env
	node bench/cluster.ts
	node bench/clusterChanges.ts
	node bench/clusterClouds.ts

bench-cluster-changes: env
	node bench/clusterChanges.ts

bench-cluster-clouds: env
	node bench/clusterClouds.ts

bench-azure: env
	node bench/azure.ts

bench-memory: env
	node bench/controllerMemory.ts

# The controller's memory before any work, layer by layer: Node.js, the Kubernetes client, Portico with each provider.
bench-memory-floor: deps
	node bench/memoryFloor.ts

bench-metal: env
	node bench/metal.ts

bench-speaker: env
	ulimit -n $$(ulimit -Hn) 2>/dev/null; node bench/speaker.ts

# BGP mode: failover at a client behind a real router (FRR), with and without BFD, and 1000 addresses advertised.
bench-bgp: env
	node bench/bgp.ts

bench-aws: env
	node bench/aws.ts

# The AWS emulator's answer time per call at 10 to 1000 Services, with test/env/moto_server.py's indexes and without.
bench-moto: env
	node bench/moto.ts

# The functions and files one AWS pass runs through (creation, resync, endpoint change).
bench-aws-pass: env
	node bench/awsPass.ts

# The image's programs in dist/ (the Dockerfile runs the same), and porticoctl as one executable a user copies onto
# their PATH: dist/bin/kubectl-portico (`kubectl portico …`) and dist/bin/porticoctl (build/porticoctl.ts).
build: deps
	npm run build
	node build/porticoctl.ts

clean:
	rm -rf dist .run
