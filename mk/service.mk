# service.mk - the service's build extras (owned by the service/security work):
#   * the Event Log message table (service/messages.mc) linked into csi-proxy.exe;
#   * Wine test tools for test/wine/service*.sh.

# --- Event Log message table ------------------------------------------------
$(WIN)/res/messages.rc: service/messages.mc | $(TOOLS_STAMP)
	@mkdir -p $(dir $@)
	cd $(dir $@) && x86_64-w64-mingw32-windmc -h . -r . $(CURDIR)/$<
$(WIN)/res/messages.o: $(WIN)/res/messages.rc
	cd $(dir $@) && x86_64-w64-mingw32-windres -I. messages.rc -o messages.o
# The exe's recipe links all its prerequisites ($^).
$(WIN)/csi-proxy.exe: $(WIN)/res/messages.o

# --- Wine test tools ----------------------------------------------------------
# (svctest's "handed" child makes a gRPC call with the CLI's client.)
$(WIN)/svctest.exe: test/wine/svctest.c $(call wobj,client/h2client.c) $(WIN)/libcore.a
	@mkdir -p $(dir $@)
	$(WINCC) -std=c11 -O2 $(WARN) -I. -I$(DEPS)/include -DNGHTTP2_STATICLIB -DUNICODE -D_UNICODE \
	    -municode -s -o $@ $^ $(WLIBS)
everything: $(WIN)/svctest.exe

# The transport's batched hand-off check against libcore.a's own object.
$(WIN)/precheck.exe: test/wine/precheck.c $(WIN)/libcore.a
	$(WINCC) $(WCFLAGS) -s -o $@ $^ $(WLIBS)
everything: $(WIN)/precheck.exe

# A second process making its own instance of a served pipe (the foreign
# instance the transport watches for).
$(WIN)/squat.exe: test/wine/squat.c | $(TOOLS_STAMP)
	$(WINCC) $(WCFLAGS) -municode -s -o $@ $< $(WLIBS)
everything: $(WIN)/squat.exe
