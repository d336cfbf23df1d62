/* cfgdir_win.h - the folder that holds the default configuration file,
 * %ProgramData%\csi-proxy, made by `csi-proxy.exe install` with a
 * protected DACL that only SYSTEM and Administrators may use (on Windows
 * C:\ProgramData lets every user make folders and files, and a folder made
 * there with mkdir inherits that). The service trusts no file there that
 * others can change (cfgfile.h). Windows build only. */
#ifndef CP_CFGDIR_WIN_H
#define CP_CFGDIR_WIN_H

/* Full control for SYSTEM and Administrators, inherited by what the folder
 * holds; nothing from ProgramData; no one else, not even to read. */
#define CP_CONFIG_DIR_SDDL L"D:P(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)"

/* Makes the folder when it is missing. When it exists: left alone when
 * safe; its DACL replaced by the protected one when it is owned by
 * SYSTEM or Administrators (a folder an administrator made with mkdir);
 * refused when someone else owns it or it is a link or a file (a planted
 * folder: the operator must look at it). Prints what it did. Returns 0 or
 * 1. */
int cp_install_config_dir(void);

#endif
