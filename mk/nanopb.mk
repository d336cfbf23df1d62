# nanopb.mk - nanopb, the second decoder: descriptors generated from api/
# at build time (never committed), its runtime from Debian's source package
# (scripts/fetch-nanopb.sh), and the differential check against protobuf-c
# (test/fuzz/decoders_diff.c): the libFuzzer target fuzz_decoders (mk/fuzz.mk
# runs it with the others) and the unit test test_decoders.
#
# Every string, bytes and repeated field is allocated (fallback_type
# FT_POINTER, PB_ENABLE_MALLOC), so nanopb has no size limit protobuf-c
# lacks; PB_FIELD_32BIT lifts its 16-bit counts and offsets.

NPB      := $(B)/nanopb
NPB_RT   := $(NPB)/rt
NPB_GEN  := $(NPB)/gen
NPB_PBC  := $(patsubst api/%.proto,$(NPB_GEN)/%.pb.c,$(PROTOS))
NPB_PBH  := $(NPB_PBC:.c=.h)
NPB_RTC  := $(addprefix $(NPB_RT)/,pb_common.c pb_decode.c pb_encode.c)
NPB_DIFF := test/fuzz/decoders_diff.c test/fuzz/decoders_rules.c
NPB_ALL  := $(NPB_RTC) $(NPB_PBC) $(NPB)/table.c $(NPB_DIFF)
NPB_DEFS := -DPB_ENABLE_MALLOC -DPB_FIELD_32BIT -I$(NPB_RT) -I$(NPB_GEN) -I$(NPB)

# one fetch writes all the runtime files (VERSION last): the files depend on
# it, so a parallel make runs the fetch once
$(NPB_RT)/VERSION: scripts/fetch-nanopb.sh | $(TOOLS_STAMP)
	bash scripts/fetch-nanopb.sh $(NPB_RT)
$(NPB_RT)/pb.h $(NPB_RTC): $(NPB_RT)/VERSION
	@test -f $@

$(NPB_GEN)/%.pb.c $(NPB_GEN)/%.pb.h: api/%.proto | $(TOOLS_STAMP)
	@mkdir -p $(NPB_GEN)
	nanopb_generator.py -q -I api -D $(NPB_GEN) -s fallback_type:FT_POINTER $*.proto

$(NPB)/table.c: scripts/nanopb_table.py $(NPB_PBH)
	$(PY) scripts/nanopb_table.py $@ $(NPB_GEN) $(NPB_PBH)

NPB_HDRS := $(NPB_RT)/pb.h $(NPB_PBH) $(GEN_H)

# native (unit test) and fuzz (clang, instrumented) objects
npb_nobj = $(patsubst %.c,$(NAT)/npb/%.o,$(1))
npb_fobj = $(patsubst %.c,$(FUZZ)/npb/%.o,$(1))
$(NAT)/npb/%.o: %.c $(NPB_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(NCFLAGS) -Wno-unused-parameter $(NPB_DEFS) -c $< -o $@
$(FUZZ)/npb/%.o: %.c $(NPB_HDRS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FCFLAGS) -Wno-unused-parameter $(NPB_DEFS) -c $< -o $@

# the fuzz target (explicit rules: fuzz.mk's patterns know no nanopb)
$(FUZZ)/obj/test/fuzz/fuzz_decoders.o: test/fuzz/fuzz_decoders.c $(NPB_HDRS) | $(TOOLS_STAMP)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FCFLAGS) -Werror $(NPB_DEFS) -c $< -o $@
$(FUZZ)/fuzz_decoders: $(FUZZ)/obj/test/fuzz/fuzz_decoders.o $(call npb_fobj,$(NPB_ALL)) $(FUZZ)/libcore.a
	$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ $(NLIBS)

# the unit test: every disagreement the fuzzer found, as a named case
$(NAT)/obj/test/unit/test_decoders.o: test/unit/test_decoders.c $(NPB_HDRS) | $(TOOLS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(NCFLAGS) $(NPB_DEFS) -c $< -o $@
$(NAT)/test_decoders: $(call nobj,test/unit/test_decoders.c test/unit/runner.c) $(call npb_nobj,$(NPB_ALL)) \
                      $(NAT)/libcore.a
	$(CC) -o $@ $^ $(UNIT_WRAP) -lcmocka $(NLIBS)

# the unit test in the ASan tree (mk/sanitize.mk, included after this file:
# its variables are spelled out here)
npb_aobj = $(patsubst %.c,$(B)/asan/npb/%.o,$(1))
$(B)/asan/npb/%.o: %.c $(NPB_HDRS)
	@mkdir -p $(dir $@)
	$(ASAN_CC) $(ACFLAGS) -Wno-unused-parameter $(NPB_DEFS) -c $< -o $@
$(B)/asan/obj/test/unit/test_decoders.o: test/unit/test_decoders.c $(NPB_HDRS) | $(TOOLS_STAMP)
	@mkdir -p $(dir $@)
	$(ASAN_CC) $(ACFLAGS) $(NPB_DEFS) -c $< -o $@
$(B)/asan/test_decoders: $(B)/asan/obj/test/unit/test_decoders.o $(B)/asan/obj/test/unit/runner.o \
                         $(call npb_aobj,$(NPB_ALL)) $(B)/asan/libcore.a
	$(ASAN_CC) $(SANFLAGS) -o $@ $^ $(UNIT_WRAP) -lcmocka $(NLIBS)

.PHONY: clean-nanopb
clean-nanopb:
	rm -rf $(NPB_GEN) $(NPB)/table.c $(NAT)/npb $(FUZZ)/npb $(B)/asan/npb
clean: clean-nanopb
