# iscsi.mk - test builds for the iSCSI Win32 back-end under Wine.
#
#   build/win/iscsidsc_fake/iscsidsc.dll     a stand-in for the initiator's
#                                            API (test/wine/iscsidsc_fake.c)
#   build/win/iscsidsc_nologin/iscsidsc.dll  the same without
#                                            LoginIScsiTargetW
# test/wine/iscsi.sh copies one at a time into its private Wine prefix's
# system32. Neither is linked into anything, nor shipped.

$(WIN)/iscsidsc_fake/iscsidsc.dll: test/wine/iscsidsc_fake.c host/iscsidsc_win.h host/iscsi_isdsc.h
	@mkdir -p $(@D)
	$(WINCC) $(WCFLAGS) -shared -s -o $@ $<

$(WIN)/iscsidsc_nologin/iscsidsc.dll: test/wine/iscsidsc_fake.c host/iscsidsc_win.h host/iscsi_isdsc.h
	@mkdir -p $(@D)
	$(WINCC) $(WCFLAGS) -DFAKE_NO_LOGIN -shared -s -o $@ $<

everything: $(WIN)/iscsidsc_fake/iscsidsc.dll $(WIN)/iscsidsc_nologin/iscsidsc.dll
