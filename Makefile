# Short names for the commands CI and maintainers run. CI itself runs `bash hack/test.sh` (README's test
# command, through .ci/run); `make test-full` is that command.
.PHONY: test test-full lint bench

# The product's unit tests, without the slow ones (-short) nor the reference tools, shared data,
# PostgreSQL or Chromium they skip without: minutes, for the edit-test loop.
test:
	go test -short ./...

# Everything CI runs: vet, lint, every test with the reference tools, the demo, the kind lane.
test-full:
	bash hack/test.sh

# go vet and staticcheck (pinned in hack/go.mod) over the product and the tools modules.
lint:
	go vet ./...
	cd hack && go vet -tags tools ./...
	cd bench && go vet ./...
	bash hack/lint.sh

# catalogbot validate against opm validate (time and peak private memory) on a shared catalog:
#   make bench CATALOG=../shared/data/catalogs/community-operators-prod-v4.20 RUNS=3
CATALOG ?= ../shared/data/catalogs/composed-279
RUNS ?= 10
bench:
	bash bench/validate.sh $(CATALOG) $(RUNS)
