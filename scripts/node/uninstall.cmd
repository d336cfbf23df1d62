@echo off
rem uninstall.cmd - stop csi-proxy (calls in flight drain) and remove the
rem csiproxy service and its Event Log source; its pipes go with the
rem process. The binaries and any config or log files stay where they are.
setlocal
set "SRC=%~dp0"
if not exist "%SRC%csi-proxy.exe" set "SRC=%~dp0..\..\build\win\"
"%SRC%csi-proxy.exe" uninstall
exit /b %errorlevel%
