# upgrade.mk - csi-proxy.exe's `install` takes over a running service and
# checks the new one with the same health probe as `csi-proxy-cli health`
# (service/upgrade_win.c, client/health.c): the CLI's client objects are
# linked into both builds of the exe. The exe recipes link all their
# prerequisites ($^); these come after libcore.a, whose members they use
# are linked already (the server uses them too).
HEALTH_WOBJ := $(call wobj,client/health.c client/h2client.c client/dial_win.c)
$(WIN)/csi-proxy.exe: $(HEALTH_WOBJ)
$(WIN)/csi-proxy-hooks.exe: $(HEALTH_WOBJ)
$(WIN)/csi-proxy-sim.exe: $(HEALTH_WOBJ)
$(WIN)/csi-proxy-model.exe: $(HEALTH_WOBJ)
