# storage.mk - the storage simulator build of the Windows service.
#
#   build/win/csi-proxy-sim.exe   csi-proxy.exe's main and core, with the
#                                 simulated storage host (sim/*_sim.c)
#                                 instead of the Win32 one: the disk and volume
#                                 groups run end to end under Wine, over the
#                                 real named pipes. Fixture:
#                                 CSI_PROXY_SIM_FIXTURE=<path> in the
#                                 environment. Test builds only.
#
# The production csi-proxy.exe links no simulator: *_sim.c files are kept
# out of the Windows core by the top-level Makefile (PLAT), and here the
# simulator's object comes before libcore.a, so the linker takes its
# cp_storage_host_open_default and never pulls storage_win.o out of the
# archive. test/wine/storage.sh checks both executables for it.

SIM_SRC := $(wildcard sim/*_sim.c)

$(WIN)/csi-proxy-sim.exe: $(call wobj,service/main_win.c $(SIM_SRC)) $(WIN)/libcore.a
	$(WINCC) -s -municode -o $@ $^ $(WLIBS)

everything: $(WIN)/csi-proxy-sim.exe

# base/winutil_win.h (the one Win32 error map) checked under Wine by
# test/wine/storage.sh, against libcore.a's own object.
$(WIN)/winutilcheck.exe: test/wine/winutilcheck.c $(WIN)/libcore.a
	$(WINCC) $(WCFLAGS) -s -o $@ $^ $(WLIBS)

everything: $(WIN)/winutilcheck.exe
