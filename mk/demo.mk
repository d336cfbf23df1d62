# demo.mk - csi-proxy doing its job on a small simulated node.
#
#   make demo         csi-proxy-sim.exe under Wine, seeded with
#                     test/fixtures/demo-node.yaml, and scripts/demo-flow.sh
#                     making a block driver's, the SMB driver's and an iSCSI
#                     login's calls over the named pipes, each call and
#                     answer printed (scripts/demo.sh)
#   make demo-native  the same flow against the native build over Unix
#                     sockets (no Wine)
#
# `make run` is the real csi-proxy.exe. test/wine/demo.sh (suite wine-demo)
# runs both and checks their transcripts.

.PHONY: demo demo-native
demo: $(WIN)/csi-proxy-sim.exe $(WIN)/csi-proxy-cli.exe $(WIN)/pipecheck.exe
	bash scripts/demo.sh
demo-native: $(NAT)/csi-proxy $(NAT)/csi-proxy-cli
	bash scripts/demo.sh --native
