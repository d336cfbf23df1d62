# hooks.mk - build/win/csi-proxy-hooks.exe: csi-proxy.exe with its test
# hooks compiled in (-DCP_TEST_HOOKS, service/main_win.c), for Wine tests
# that need a race window held open (test/wine/console_late.sh). Test
# builds only: the production csi-proxy.exe is built without the macro.

$(WIN)/obj-hooks/service/main_win.o: service/main_win.c $(GEN_H) $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(WINCC) $(WCFLAGS) -DCP_TEST_HOOKS -c $< -o $@

$(WIN)/csi-proxy-hooks.exe: $(WIN)/obj-hooks/service/main_win.o $(WIN)/libcore.a $(WIN)/res/messages.o
	$(WINCC) -s -municode -o $@ $^ $(WLIBS)

everything: $(WIN)/csi-proxy-hooks.exe
