<#
.SYNOPSIS
  The system group on a real Windows node: GetService against Get-Service,
  StopService and StartService of a service groups.system.allowedServices
  lists, and the refusal of one it does not list. Changes the machine: it
  stops and starts -Allowed (default MSiSCSI, the service upstream's own
  integration test stops and starts). NOT RUN by the team yet.

  The service under test must run with a configuration whose
  groups.system.allowedServices lists -Allowed and not -Refused (run-all.ps1's
  test configuration does).
.EXAMPLE
  .\system.ps1 -Cli C:\csi-test\csi-proxy-cli.exe
#>
param(
    [Parameter(Mandatory = $true)] [string] $Cli,
    [string] $Allowed = 'MSiSCSI',
    [string] $Refused = 'W32Time'
)
$ErrorActionPreference = 'Stop'
Set-StrictMode -Version 3
. (Join-Path $PSScriptRoot 'common.ps1')   # Claim, Ok, Bad, Check, Skip, Complete-Tests

$reqFile = Join-Path $env:TEMP "csi-proxy-system-$PID.json"
function Sys([string] $Method, $Body) {
    [IO.File]::WriteAllText($reqFile, ($Body | ConvertTo-Json -Compress))
    $r = Invoke-Native $Cli @('system', 'v1alpha1', $Method, "@$reqFile")
    $out = $r.Out
    $code = $r.Code
    $line = $out | Where-Object { $_.StartsWith('{') } | Select-Object -First 1
    $json = $null
    if ($line) { $json = $line | ConvertFrom-Json }
    [pscustomobject]@{ Code = $code; Out = ($out -join ' | '); Json = $json }
}
function WaitStatus([string] $name, [string] $status) {
    $until = (Get-Date).AddSeconds(30)
    while ((Get-Date) -lt $until) {
        if ("$((Get-Service -Name $name).Status)" -eq $status) { return $true }
        Start-Sleep -Milliseconds 250
    }
    return $false
}

$before = Get-Service -Name $Allowed
$refusedBefore = Get-Service -Name $Refused -ErrorAction SilentlyContinue

Claim 'README verification table, system GetService: display name, status and start type as the SCM reports them'
$r = Sys 'GetService' @{ name = $Allowed }
Check ($r.Code -eq 0) "GetService $Allowed" $r.Out
if ($r.Code -eq 0) {
    Check ("$($r.Json.display_name)" -eq $before.DisplayName) 'its display name is Get-Service''s' "$($r.Out) / $($before.DisplayName)"
}
$r = Sys 'GetService' @{ name = 'csi-proxy-no-such-service' }
Check ($r.Code -eq 5) 'GetService of an unknown service is NOT_FOUND' $r.Out

Claim 'README "Behaviour compared with upstream", System: StopService and StartService touch only the services groups.system.allowedServices lists'
$r = Sys 'StopService' @{ name = $Allowed; force = $true }
Check ($r.Code -eq 0 -and (WaitStatus $Allowed 'Stopped')) "StopService $Allowed (listed): stopped" $r.Out
$r = Sys 'StartService' @{ name = $Allowed }
Check ($r.Code -eq 0 -and (WaitStatus $Allowed 'Running')) "StartService $Allowed (listed): running" $r.Out
if ($refusedBefore) {
    $r = Sys 'StopService' @{ name = $Refused }
    Check ($r.Code -eq 7 -and $r.Out -like "*$Refused*") "StopService $Refused (not listed) is PERMISSION_DENIED naming it" $r.Out
    Check ("$((Get-Service -Name $Refused).Status)" -eq "$($refusedBefore.Status)") "... and $Refused is as it was ($($refusedBefore.Status))"
} else {
    Skip "StopService of a service not listed is PERMISSION_DENIED" "no service $Refused on this machine"
}
if ("$($before.Status)" -ne 'Running') { Stop-Service -Name $Allowed -ErrorAction SilentlyContinue }
Remove-Item -Force $reqFile -ErrorAction SilentlyContinue
Complete-Tests
