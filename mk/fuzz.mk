# fuzz.mk - libFuzzer targets (clang, native, ASan + UBSan).
#   make fuzz          build, then fuzz each target for FUZZ_SECONDS (default
#                      60) starting from its committed corpus; new inputs go
#                      to build/fuzz/corpus/<target>, crashes to
#                      build/fuzz/artifacts/
#   make fuzz-smoke    run each target once over its committed corpus, no
#                      mutation (part of `make test`, a few seconds)
# Targets: test/fuzz/fuzz_<name>.c, corpus test/fuzz/corpus/<name>/.

FUZZ       := $(B)/fuzz
FUZZ_CC    := clang
FUZZ_SAN   := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
# The core is built as the native tree is, instrumented for coverage; the
# project's own warnings stay, -Werror only on the targets (clang may warn
# where gcc does not, in code other issues are changing; clang does not
# know gnu_printf, CP_PRINTF's format archetype).
FCFLAGS    := $(filter-out -O2 -Werror,$(NCFLAGS)) -O1 $(FUZZ_SAN) -fsanitize=fuzzer-no-link \
              -Wno-ignored-attributes
FUZZ_SECONDS ?= 60

fobj = $(patsubst %.c,$(FUZZ)/obj/%.o,$(1))

FUZZ_SRC   := $(wildcard test/fuzz/fuzz_*.c)
# the config parser's target once service/config.c exists
ifeq ($(wildcard service/config.c),)
FUZZ_SRC   := $(filter-out test/fuzz/fuzz_config.c,$(FUZZ_SRC))
endif
FUZZ_NAMES := $(patsubst test/fuzz/fuzz_%.c,%,$(FUZZ_SRC))
FUZZ_BIN   := $(addprefix $(FUZZ)/fuzz_,$(FUZZ_NAMES))

$(FUZZ)/obj/$(GEN)/%.o: $(GEN)/%.c | $(TOOLS_STAMP)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FCFLAGS) -Wno-unused-parameter -c $< -o $@
$(FUZZ)/obj/test/fuzz/%.o: test/fuzz/%.c $(GEN_H) | $(TOOLS_STAMP)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FCFLAGS) -Werror -c $< -o $@
$(FUZZ)/obj/%.o: %.c $(GEN_H) | $(TOOLS_STAMP)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FCFLAGS) -c $< -o $@

$(FUZZ)/libcore.a: $(call fobj,$(NAT_SRC))
	@rm -f $@; ar rcs $@ $^
$(FUZZ)/fuzz_%: $(FUZZ)/obj/test/fuzz/fuzz_%.o $(FUZZ)/libcore.a
	$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ $(NLIBS)

.PHONY: fuzz fuzz-build fuzz-smoke
fuzz-build: $(FUZZ_BIN)
everything: $(FUZZ_BIN)

fuzz-smoke: $(FUZZ_BIN)
	bash test/fuzz/run.sh smoke $(FUZZ_NAMES)

fuzz: $(FUZZ_BIN)
	FUZZ_SECONDS=$(FUZZ_SECONDS) bash test/fuzz/run.sh fuzz $(FUZZ_NAMES)
