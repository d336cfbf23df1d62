@echo off
rem upgrade.cmd [SERVICE FLAGS...] - replace the csiproxy service's binary
rem with this release's, in place: the exe keeps the service's flags unless
rem flags are given, stops it (calls in flight drain), keeps the old binary
rem as csi-proxy.exe.old, starts the new one and waits until every pipe
rem answers; if it does not come up it rolls back and the old one serves
rem again (exit 3). Refuses when there is no csiproxy service (use
rem install.cmd). CSI_PROXY_CONFIG as for install.cmd. (Self-contained, not
rem "call install.cmd": Wine's cmd loses the exit code of a called script.)
setlocal
set "SRC=%~dp0"
if not exist "%SRC%csi-proxy.exe" set "SRC=%~dp0..\..\build\win\"
set "CFGFLAG="
if not "%CSI_PROXY_CONFIG%"=="" set CFGFLAG=-config "%CSI_PROXY_CONFIG%"
sc.exe query csiproxy >nul 2>&1
if errorlevel 1 (
  echo upgrade.cmd: there is no csiproxy service to upgrade: use install.cmd
  exit /b 1
)
"%SRC%csi-proxy.exe" install %CFGFLAG% %*
if errorlevel 1 exit /b %errorlevel%
"%SRC%csi-proxy-cli.exe" health -deadline 30s %CFGFLAG%
if errorlevel 1 (
  echo upgrade.cmd: csi-proxy was upgraded but not every pipe answers
  exit /b 1
)
echo upgrade.cmd: csi-proxy is upgraded and healthy
exit /b 0
