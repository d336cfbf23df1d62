<#
.SYNOPSIS
  The gate's system judge (security/osjudge_win.c: one AccessCheck, one
  access bit per allowed SID) against CheckTokenMembership, on a real
  Windows node: the restricted-token half Wine cannot show.
  Status: written, NOT RUN by the team (CI is Linux + Wine).

.DESCRIPTION
  Runs "svctest osjudge" (build/win/svctest.exe, in -Dir): 13 cases of a
  token and a list of SIDs, each answered by the judge and by
  CheckTokenMembership SID by SID; they must agree. Under Wine 8 they do,
  but Wine ignores restricting SIDs, so the two tokens made by
  CreateRestrictedToken with SidsToRestrict behave there as unrestricted.
  On Windows, per Microsoft's "Restricted Tokens" page, the restricted
  token whose restricting SIDs are only Everyone must NOT be a member for
  Administrators (both answers "not member"), and the one whose restricting
  SIDs include Administrators must be. Run from an elevated PowerShell (the
  first cases expect an admin token). Exits with svctest's code (0: all
  agree). Record the result (date, Windows build, output) in README.md.
#>
param([Parameter(Mandatory = $true)] [string] $Dir)
$ErrorActionPreference = 'Stop'
Set-StrictMode -Version 3

. (Join-Path $PSScriptRoot 'common.ps1')   # Claim, Ok, Bad, Check, Skip, Complete-Tests

Claim 'README "Security model" 2: the gate''s AccessCheck judge answers as CheckTokenMembership, SID by SID'
$r = Invoke-Native (Join-Path $Dir 'svctest.exe') @('osjudge')
$out = $r.Out
$code = $r.Code
$out | ForEach-Object { Write-TestLine "# svctest: $_" }
Check ($code -eq 0) 'svctest osjudge: the judge and CheckTokenMembership agree on every case' "exit $code"
$restricted = @($out | Where-Object { $_ -like '*restricting SIDs {Everyone}, Administrators:*' })
if ($restricted.Count -eq 0) {
    Bad 'on Windows a token restricted to {Everyone} is not a member of Administrators' 'svctest printed no such case'
} else {
    Check ($restricted[0] -like '*: not member (CheckTokenMembership: not member)*') `
        'on Windows a token restricted to {Everyone} is not a member of Administrators' $restricted[0]
}
Complete-Tests
