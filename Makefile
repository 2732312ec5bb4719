# Thin wrapper around scripts/deps.sh, CMake and CTest.
#   make demo   build pyvisor and run the sales-analysis example in the sandbox
#   make test   build pyvisor and run the whole test suite (ctest)
BUILD_DIR ?= build
JOBS      ?= 2
DEMO_OUT  ?= demo-output

.PHONY: all deps build demo test clean

all: build

deps:
	@scripts/deps.sh

build: deps
	cmake -S . -B $(BUILD_DIR)
	cmake --build $(BUILD_DIR) -j$(JOBS)

demo: build
	$(BUILD_DIR)/pyvisor run --input examples/sales.csv \
		--output-dir $(DEMO_OUT) --force examples/analyze_sales.py
	@echo
	@echo "chart:   $(CURDIR)/$(DEMO_OUT)/chart.png"
	@echo "summary: $(CURDIR)/$(DEMO_OUT)/summary.json"

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j$(JOBS) --timeout 600

clean:
	rm -rf $(BUILD_DIR) $(DEMO_OUT)
