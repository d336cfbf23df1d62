# dist.mk - the version header and the release archive.
#
#   make dist   build/dist/csi-proxy-<version>-windows-amd64.zip (+ .sha256),
#               the same csi-proxy.exe as the platforms download it:
#               build/dist/csi-proxy-<version>-windows-amd64.tar.gz
#               (bin/csi-proxy.exe: AKS, aks-engine, Rancher's wins) and
#               build/dist/<version>/csi-proxy.exe (GKE's kube-up), each
#               with its .sha256, and the SPDX SBOM of the zip,
#               build/dist/csi-proxy-<version>-windows-amd64.spdx.json
#   make dist CP_VERSION=... DIST_MTIME=...   the same from a tree without git
#
# The version (scripts/dist/version.sh) is written to $(GEN)/cp_version.h on
# every make run, but the file is only rewritten when the version changes (a
# new commit, a tree becoming dirty), so objects that include it rebuild then
# and only then. The archive is reproducible: the executables are linked
# without a PE timestamp, and scripts/dist/mkdist.py writes the zip and the
# tar.gz with fixed entry order, times, owner and permissions (gzip without
# a name or time); scripts/dist/sbom.py dates the SBOM at the same time.

DIST := $(B)/dist
VERSION_H := $(GEN)/cp_version.h

# FORCE: always out of date. It must be .PHONY (the top Makefile's bare
# .SECONDARY: would let a missing FORCE count as up to date) and so has a
# do-nothing recipe (lint: a .PHONY target must do something).
.PHONY: dist FORCE
FORCE: ; @:

$(VERSION_H): FORCE | $(TOOLS_STAMP)
	@CP_VERSION="$(CP_VERSION)" scripts/dist/version.sh --header $@ >/dev/null

# Every object may include service/version.h, which includes the generated
# header; after the first compile, -MMD tracks who really does.
$(NAT_OBJ) $(WIN_OBJ) $(call nobj,service/main_posix.c cli/main.c) \
    $(call wobj,service/main_win.c cli/main.c): | $(VERSION_H)

# No link time in the PE header (ld's default for PE is to insert one), so
# two links of the same objects give the same bytes.
WLIBS += -Wl,--no-insert-timestamp

# What goes into the archive, flat (the node scripts find the exes beside
# them with %~dp0): the two programs, the example configurations, the node
# scripts, the node self-test (selftest.ps1 and the common.ps1 it
# dot-sources from beside it), the operators' README, the license and its
# notice.
DIST_FILES := $(WIN)/csi-proxy.exe $(WIN)/csi-proxy-cli.exe \
              $(sort $(wildcard config/*.example.yaml)) \
              $(sort $(wildcard scripts/node/*.cmd)) \
              test/windows/selftest.ps1 test/windows/common.ps1 \
              $(GEN)/README-operators.txt \
              $(wildcard LICENSE NOTICE)

# The operators' README is docs/operators/*.md as plain text.
$(GEN)/README-operators.txt: scripts/dist/operators_txt.py $(sort $(wildcard docs/operators/*.md))
	@mkdir -p $(@D)
	$(PY) scripts/dist/operators_txt.py --out $@ docs/operators

# Every entry is dated the commit's time (make DIST_MTIME=<epoch> to choose).
DIST_MTIME ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 315532800)

# The SBOM's third-party packages: the Debian source versions build-deps.sh
# recorded, kept when a program's link map shows the library linked.
dist: $(DIST_FILES) $(VERSION_H) scripts/dist/mkdist.py scripts/dist/sbom.py $(DEPS_STAMP)
	$(PY) scripts/dist/mkdist.py --version-header $(VERSION_H) --out $(DIST) \
	    --mtime "$(DIST_MTIME)" \
	    $(DIST_FILES)
	$(PY) scripts/dist/sbom.py --version-header $(VERSION_H) --out $(DIST) \
	    --mtime "$(DIST_MTIME)" --versions $(DEPS)/VERSIONS \
	    --map csi-proxy.exe=$(WIN)/csi-proxy.exe.map --map csi-proxy-cli.exe=$(WIN)/csi-proxy-cli.exe.map
