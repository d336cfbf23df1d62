# model.mk - the device-model build of the Windows service.
#
#   build/win/csi-proxy-model.exe  csi-proxy.exe's main and core with the
#                                  product's Win32 storage host unchanged,
#                                  on the device model's call table
#                                  (test/model/*.c) instead of the real one
#                                  (host/storage_calls_win.h). Fixture:
#                                  CSI_PROXY_MODEL_FIXTURE=<path>. Test
#                                  builds only.
#
# The model's objects come before libcore.a: the linker takes the model's
# cp_storage_host_open_default and never pulls storage_calls_win.o (the
# real table) out of the archive; storage_win.o and the rest of the
# Win32 host come from libcore.a as in csi-proxy.exe. The fixture's
# volume bytes are read by sim/headbytes_sim.c, as the storage simulator
# reads its own (the one simulator object here; no simulated host).
# csi-proxy.exe links no test/model object (test/exe/check_imports.sh,
# test/wine/model.sh).

MODEL_SRC := $(wildcard test/model/*.c) sim/headbytes_sim.c

$(WIN)/csi-proxy-model.exe: $(call wobj,service/main_win.c $(MODEL_SRC)) $(WIN)/libcore.a
	$(WINCC) -s -municode -Wl,-Map=$@.map,--cref -o $@ $^ $(WLIBS)

everything: $(WIN)/csi-proxy-model.exe
