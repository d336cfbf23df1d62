# Metrics over http.sys: the Wine suite's HTTP client inside the prefix.
$(WIN)/httpcheck.exe: test/wine/httpcheck.c | $(TOOLS_STAMP)
	@mkdir -p $(dir $@)
	$(WINCC) -std=c11 -O2 $(WARN) -s -o $@ $< -lws2_32
all: $(WIN)/httpcheck.exe
