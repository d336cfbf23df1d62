# Benchmarks under Wine (issue 5, part 1 and the Wine half of part 3).
#   make bench       floor + PathExists over gRPC + memory/size/start-up + a
#                    10k->100k load check; table on stdout, build/bench.json
#   make load-wine   memory and handle count between 100,000 and 1,000,000 calls
# The tools are test programs built with mingw; none is linked into the product.

BENCH_CFLAGS := -std=c11 -O2 $(WARN) -DUNICODE -D_UNICODE -D_WIN32_WINNT=0x0A00 \
                -D__USE_MINGW_ANSI_STDIO=1 -DNGHTTP2_STATICLIB -I$(DEPS)/include
BENCH_TOOLS  := $(WIN)/bench-floor.exe $(WIN)/bench-grpc.exe $(WIN)/bench-mon.exe \
                $(WIN)/bench-sleep.exe $(WIN)/bench-hostops.exe

$(WIN)/bench/%.o: test/bench/%.c test/bench/bench_util.h test/bench/gbc.h $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(WINCC) $(BENCH_CFLAGS) -c $< -o $@

$(WIN)/bench-floor.exe: $(WIN)/bench/floor.o $(WIN)/bench/bench_util.o
	$(WINCC) -s -static -o $@ $^
$(WIN)/bench-grpc.exe: $(WIN)/bench/grpcbench.o $(WIN)/bench/gbc.o $(WIN)/bench/bench_util.o
	$(WINCC) -s -static -o $@ $^ -L$(DEPS)/lib -lnghttp2
$(WIN)/bench-mon.exe: $(WIN)/bench/mon.o $(WIN)/bench/bench_util.o
	$(WINCC) -s -static -o $@ $^ -lntdll
$(WIN)/bench-hostops.exe: $(WIN)/bench/hostops.o $(WIN)/bench/bench_util.o
	$(WINCC) -s -static -o $@ $^
$(WIN)/bench-sleep.exe: $(WIN)/bench/sleep.o
	$(WINCC) -s -static -o $@ $^

.PHONY: bench load-wine bench-tools
bench-tools: $(BENCH_TOOLS)

bench: all $(BENCH_TOOLS)
	bash scripts/bench.sh bench

load-wine: all $(BENCH_TOOLS)
	bash scripts/bench.sh load
