/* alarmkey.h - where the service marks a pipe that has a server instance
 * it did not make (service/pipealarm.h) and where `csi-proxy-cli health`
 * (client/dial_win.c) reads the marks: a HKEY_LOCAL_MACHINE subkey holding
 * one REG_SZ value per pipe under attack since the service started (the
 * pipe's name, "csi-proxy-smb-v1"; the message). Writable by SYSTEM and
 * Administrators only (inherited from SOFTWARE). */
#ifndef CP_ALARMKEY_H
#define CP_ALARMKEY_H

#define CP_PIPEALARM_REG_KEY L"SOFTWARE\\csi-proxy\\PipeAlarms"

#endif
