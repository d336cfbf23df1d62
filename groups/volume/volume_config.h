/* volume_config.h - the volume group's own settings (groups.volume in the
 * configuration file; the service fills them). Portable C. */
#ifndef CP_VOLUME_CONFIG_H
#define CP_VOLUME_CONFIG_H

#include <stdbool.h>

typedef struct cp_volume_config {
    /* groups.volume.formatForeignFilesystems: FormatVolume formats a volume
     * whose first bytes carry a file system or container Windows does not
     * mount (host/fssig.h); the zero value refuses it. */
    bool format_foreign_filesystems;
} cp_volume_config;

#endif
