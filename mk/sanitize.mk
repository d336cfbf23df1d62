# sanitize.mk - a second native tree under ASan + UBSan (build/asan), the
# load client, and the suites that run on it.
#   make asan          build build/asan/{csi-proxy,test_*} and the load client
#   make test-asan     unit tests + grpcio conformance against build/asan
#   make test-faults   fault suite (raw HTTP/2 against build/asan/csi-proxy)
#   make load          64 clients x 10,000 calls against build/asan/csi-proxy
# `make test` builds all of it; test/run-all.sh runs the short versions.

ASAN     := $(B)/asan
ASAN_CC  := gcc
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
ACFLAGS  := $(filter-out -O2,$(NCFLAGS)) -O1 $(SANFLAGS)

aobj = $(patsubst %.c,$(ASAN)/obj/%.o,$(1))

ASAN_OBJ  := $(call aobj,$(NAT_SRC))
ASAN_UNIT := $(patsubst test/unit/%.c,$(ASAN)/%,$(UNIT_SRC))
LOAD_BIN  := $(NAT)/load-client
ASAN_ALL  := $(ASAN)/csi-proxy $(ASAN_UNIT) $(LOAD_BIN)

$(ASAN)/obj/$(GEN)/%.o: $(GEN)/%.c | $(TOOLS_STAMP)
	@mkdir -p $(dir $@)
	$(ASAN_CC) $(ACFLAGS) -Wno-unused-parameter -c $< -o $@
$(ASAN)/obj/%.o: %.c $(GEN_H) | $(TOOLS_STAMP)
	@mkdir -p $(dir $@)
	$(ASAN_CC) $(ACFLAGS) -c $< -o $@

$(ASAN)/libcore.a: $(ASAN_OBJ)
	@rm -f $@; ar rcs $@ $^
$(ASAN)/csi-proxy: $(call aobj,service/main_posix.c) $(ASAN)/libcore.a
	$(ASAN_CC) $(SANFLAGS) -o $@ $^ $(NLIBS)
$(ASAN)/libunit.a: $(call aobj,$(UNIT_LIB_SRC))
	@rm -f $@; ar rcs $@ $^
$(ASAN)/test_%: $(call aobj,test/unit/test_%.c test/unit/runner.c) $(ASAN)/libunit.a $(ASAN)/libcore.a
	$(ASAN_CC) $(SANFLAGS) -o $@ $^ $(UNIT_WRAP) -lcmocka $(NLIBS)

# The load client is a plain (uninstrumented) native program: the server is
# what is under test, and the client's CPU is better spent making calls.
$(LOAD_BIN): $(call nobj,test/load/load_client.c client/h2client.c client/dial_posix.c) $(NAT)/libcore.a
	$(CC) -o $@ $^ $(NLIBS)

.PHONY: asan test-asan test-faults load
asan: $(ASAN_ALL)
everything: $(ASAN_ALL)

SAN_ENV := ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:detect_stack_use_after_return=1 \
           UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

test-asan: $(ASAN_ALL)
	@set -e; for t in $(ASAN_UNIT); do echo "== $$t"; $(SAN_ENV) $$t; done
	$(SAN_ENV) CSI_PROXY_SERVER=$(ASAN)/csi-proxy $(PY) -m pytest -q -p no:cacheprovider test/conformance

test-faults: $(ASAN_ALL)
	$(SAN_ENV) $(PY) -m pytest -q -p no:cacheprovider test/faults

load: $(ASAN_ALL)
	$(SAN_ENV) bash test/load/run.sh full
