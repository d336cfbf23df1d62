@echo off
rem install.cmd [SERVICE FLAGS...] - install csi-proxy on this node, or
rem take over the csiproxy service already there (upstream's, the EKS
rem AMI's, an older one of ours: see upgrade.cmd). Run it from the unpacked
rem release archive at an elevated prompt (or as SYSTEM: Packer, SSM).
rem
rem   CSI_PROXY_DIR     where a new install puts the exes
rem                     (default C:\etc\kubernetes\node\bin, upstream's)
rem   CSI_PROXY_CONFIG  a config file for the service (-config; absolute)
rem   CSI_PROXY_GROUPS  local groups to create for least privilege, e.g.
rem                     "csi-proxy-smb csi-proxy-disk" (net localgroup)
rem
rem csi-proxy.exe install (both paths below) makes %ProgramData%\csi-proxy,
rem the folder of the default config.yaml, with a protected DACL for SYSTEM
rem and Administrators, and refuses a CSI_PROXY_CONFIG file (or a default
rem one) that anyone else may change.
rem
rem With no flags a new service gets none (upstream's defaults) and an
rem existing one keeps its own. Prints the health of every pipe at the end;
rem exit 0 only when csi-proxy serves and every pipe answers.
setlocal
set "SRC=%~dp0"
if not exist "%SRC%csi-proxy.exe" set "SRC=%~dp0..\..\build\win\"
if not exist "%SRC%csi-proxy.exe" (
  echo install.cmd: no csi-proxy.exe next to this script
  exit /b 1
)
if "%CSI_PROXY_DIR%"=="" set "CSI_PROXY_DIR=C:\etc\kubernetes\node\bin"
set "CFGFLAG="
if not "%CSI_PROXY_CONFIG%"=="" set CFGFLAG=-config "%CSI_PROXY_CONFIG%"

for %%G in (%CSI_PROXY_GROUPS%) do (
  net localgroup %%G >nul 2>&1
  if errorlevel 1 (
    net localgroup %%G /add /comment:"csi-proxy callers allowed on this group's pipes"
    if errorlevel 1 (
      echo install.cmd: could not create local group %%G
      exit /b 1
    )
    echo install.cmd: local group %%G created
  ) else (
    echo install.cmd: local group %%G exists
  )
)

sc.exe query csiproxy >nul 2>&1
if not errorlevel 1 goto takeover

echo install.cmd: installing into %CSI_PROXY_DIR%
if not exist "%CSI_PROXY_DIR%" mkdir "%CSI_PROXY_DIR%"
rem (no "||" here: Wine's cmd mishandles it after a redirection)
copy /y "%SRC%csi-proxy.exe" "%CSI_PROXY_DIR%\csi-proxy.exe" >nul
if errorlevel 1 exit /b 1
copy /y "%SRC%csi-proxy-cli.exe" "%CSI_PROXY_DIR%\csi-proxy-cli.exe" >nul
if errorlevel 1 exit /b 1
"%CSI_PROXY_DIR%\csi-proxy.exe" install %CFGFLAG% %*
if errorlevel 1 exit /b %errorlevel%
sc.exe start csiproxy >nul
set "CLI=%CSI_PROXY_DIR%\csi-proxy-cli.exe"
goto health

:takeover
rem The exe swaps itself in where the service's binary is (keeping the old
rem one as csi-proxy.exe.old), checks the new one and rolls back if needed.
"%SRC%csi-proxy.exe" install %CFGFLAG% %*
if errorlevel 1 exit /b %errorlevel%
rem A service that was registered but stopped (an image whose bootstrap
rem starts it later) stays stopped through the takeover: start it, as a
rem new install does (an error here only means it already runs).
sc.exe start csiproxy >nul 2>&1
set "CLI=%SRC%csi-proxy-cli.exe"

:health
"%CLI%" health -deadline 30s %CFGFLAG%
if errorlevel 1 (
  echo install.cmd: csi-proxy is installed but not every pipe answers
  exit /b 1
)
echo install.cmd: csi-proxy is installed and healthy
exit /b 0
