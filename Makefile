# csi-proxy in C - build and test.
#   make            set up tools, cross-build deps, generate code, build the
#                   two products (csi-proxy.exe, csi-proxy-cli.exe), their
#                   native builds and the native unit tests
#   make everything also the sanitizer and fuzzing trees and the test programs
#   make run        start csi-proxy.exe under Wine (console mode) for a demo
#   make demo       a driver's calls, printed, on a simulated node (mk/demo.mk)
#   make test       every suite (docs/testing.md)
.DEFAULT_GOAL := all
.DELETE_ON_ERROR:
.SECONDARY:
SHELL := /bin/bash

B      := build
GEN    := $(B)/gen
DEPS   := $(B)/deps/win
NAT    := $(B)/native
WIN    := $(B)/win
WINCC  := x86_64-w64-mingw32-gcc
CC     := gcc
PY     := /usr/bin/python3

TOOLS_STAMP := $(B)/.tools-stamp
DEPS_STAMP  := $(DEPS)/.stamp

WARN   := -Wall -Wextra -Werror -Wno-missing-field-initializers
COMMON := -std=c11 -O2 -g $(WARN) -I. -I$(GEN) -MMD -MP
NCFLAGS := $(COMMON) -D_GNU_SOURCE -pthread
WCFLAGS := $(COMMON) -D__USE_MINGW_ANSI_STDIO=1 -DNGHTTP2_STATICLIB -DYAML_DECLARE_STATIC -DUNICODE -D_UNICODE \
           -D_WIN32_WINNT=0x0A00 -I$(DEPS)/include
NLIBS  := -lnghttp2 -lprotobuf-c -lyaml -pthread
WLIBS  := -L$(DEPS)/lib -lnghttp2 -lprotobuf-c -lyaml -ladvapi32 -lhttpapi \
          -lws2_32 -static

# --- sources: the build picks the platform by file name -----------------
PROTOS  := $(sort $(wildcard api/*/*/api.proto)) api/grpc/health/v1/health.proto
GEN_C   := $(patsubst api/%.proto,$(GEN)/%.pb-c.c,$(PROTOS))
GEN_H   := $(GEN_C:.c=.h)
# The folders are the layers, bottom to top (docs/design/data-flow.md).
LAYERS  := base rpc transport transport/pipe dispatch metrics groups groups/* host security service
PLAT    := %_posix.c %_win.c %_sim.c
LIB_SRC := $(filter-out service/main%.c,$(wildcard $(addsuffix /*.c,$(LAYERS))))
CORE    := $(filter-out $(PLAT),$(LIB_SRC)) $(GEN_C)
NAT_SRC := $(CORE) $(filter %_posix.c,$(LIB_SRC)) $(wildcard sim/*.c)
WIN_SRC := $(CORE) $(filter %_win.c,$(LIB_SRC))
CLI_SRC := $(filter-out cli/main.c $(PLAT),$(wildcard cli/*.c client/*.c))

nobj = $(patsubst %.c,$(NAT)/obj/%.o,$(1))
wobj = $(patsubst %.c,$(WIN)/obj/%.o,$(1))

NAT_OBJ := $(call nobj,$(NAT_SRC))
WIN_OBJ := $(call wobj,$(WIN_SRC))

UNIT_SRC  := $(wildcard test/unit/test_*.c)
UNIT_BIN  := $(patsubst test/unit/%.c,$(NAT)/%,$(UNIT_SRC))
# The unit tests' shared helpers (every other test/unit/*.c), as an archive:
# a test binary links the ones it uses.
UNIT_LIB_SRC := $(filter-out $(UNIT_SRC) test/unit/runner.c,$(wildcard test/unit/*.c))

all: $(WIN)/csi-proxy.exe $(WIN)/csi-proxy-cli.exe $(NAT)/csi-proxy $(NAT)/csi-proxy-cli $(UNIT_BIN)
# The test trees and programs (mk/*.mk add theirs).
everything: all

# --- set-up -----------------------------------------------------------
$(TOOLS_STAMP): scripts/apt-packages.txt scripts/setup-tools.sh scripts/npm-tools/package.json \
                scripts/npm-tools/package-lock.json
	@mkdir -p $(B)
	bash scripts/setup-tools.sh
	@touch $@

$(DEPS_STAMP): scripts/build-deps.sh | $(TOOLS_STAMP)
	bash scripts/build-deps.sh $(DEPS)

# --- generated code ---------------------------------------------------
$(GEN)/%.pb-c.c $(GEN)/%.pb-c.h: api/%.proto | $(TOOLS_STAMP)
	@mkdir -p $(dir $@)
	protoc-c -I api --c_out=$(GEN) $*.proto

# --- objects ----------------------------------------------------------
$(NAT)/obj/$(GEN)/%.o: $(GEN)/%.c | $(TOOLS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(NCFLAGS) -Wno-unused-parameter -c $< -o $@
$(NAT)/obj/%.o: %.c $(GEN_H) | $(TOOLS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(NCFLAGS) -c $< -o $@
$(WIN)/obj/$(GEN)/%.o: $(GEN)/%.c $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(WINCC) $(WCFLAGS) -Wno-unused-parameter -c $< -o $@
$(WIN)/obj/%.o: %.c $(GEN_H) $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(WINCC) $(WCFLAGS) -c $< -o $@

# --- programs ---------------------------------------------------------
$(NAT)/libcore.a: $(NAT_OBJ)
	@rm -f $@; ar rcs $@ $^
$(WIN)/libcore.a: $(WIN_OBJ)
	@rm -f $@; x86_64-w64-mingw32-ar rcs $@ $^

$(NAT)/csi-proxy: $(call nobj,service/main_posix.c) $(NAT)/libcore.a
	$(CC) -o $@ $^ $(NLIBS)
$(WIN)/csi-proxy.exe: $(call wobj,service/main_win.c) $(WIN)/libcore.a
	$(WINCC) -s -municode -Wl,-Map=$@.map,--cref -o $@ $^ $(WLIBS)

$(NAT)/csi-proxy-cli: $(call nobj,cli/main.c $(CLI_SRC) $(wildcard cli/*_posix.c client/*_posix.c)) $(NAT)/libcore.a
	$(CC) -o $@ $^ $(NLIBS)
$(WIN)/csi-proxy-cli.exe: $(call wobj,cli/main.c $(CLI_SRC) $(wildcard cli/*_win.c client/*_win.c)) $(WIN)/libcore.a
	$(WINCC) -s -municode -Wl,-Map=$@.map,--cref -o $@ $^ $(WLIBS)

# Every unit test binary takes a test name or glob, or --list (test/unit/runner.c).
UNIT_WRAP := -Wl,--wrap=main -Wl,--wrap=_cmocka_run_group_tests
$(NAT)/libunit.a: $(call nobj,$(UNIT_LIB_SRC))
	@rm -f $@; ar rcs $@ $^
$(NAT)/test_%: $(call nobj,test/unit/test_%.c test/unit/runner.c) $(NAT)/libunit.a $(NAT)/libcore.a
	$(CC) -o $@ $^ $(UNIT_WRAP) -lcmocka $(NLIBS)

# --- commands ---------------------------------------------------------
.PHONY: all everything run test test-unit test-api test-conformance test-wine clean
run: all
	bash scripts/run-demo.sh

test: everything
	bash test/run-all.sh

test-unit: $(UNIT_BIN)
	@set -e; for t in $(UNIT_BIN); do echo "== $$t"; $$t; done

test-api: | $(TOOLS_STAMP)
	$(PY) -m pytest -q test/api

test-conformance: all
	bash test/run-all.sh conformance

test-wine: everything
	bash test/run-all.sh 'wine*'

clean:
	rm -rf $(NAT) $(WIN) $(GEN)

-include $(shell find $(B) -name '*.d' 2>/dev/null)

# --- Wine test tools ----------------------------------------------------
$(WIN)/pipecheck.exe: test/wine/pipecheck.c | $(TOOLS_STAMP)
	@mkdir -p $(dir $@)
	$(WINCC) -std=c11 -O2 $(WARN) -DUNICODE -D_UNICODE -s -o $@ $< -ladvapi32
everything: $(WIN)/pipecheck.exe

# --- per-area rules (bench, fuzz, storage sim, service tests, ...) -------
-include $(sort $(wildcard mk/*.mk))
