/* yamldepth.h - a cap on how deeply a YAML text nests, checked while it
 * is parsed. libyaml's scanner keeps a possible simple key for every open
 * flow collection and looks at all of them for each token, so a text of
 * nested "[[[[..." costs time quadratic in its depth (100 KB: seconds;
 * 1 MiB: minutes) before any walker could refuse it. The configuration
 * loader runs this first: it counts the depth as the parser's events
 * arrive and stops at the first collection deeper than the cap. The
 * configuration's own shape nests five levels. Portable C (libyaml).
 */
#ifndef CP_YAMLDEPTH_H
#define CP_YAMLDEPTH_H

#include <stddef.h>

#include "base/status.h"

#define CP_YAML_MAX_DEPTH 16

/* CP_OK when yaml (len bytes) nests at most CP_YAML_MAX_DEPTH collections
 * deep, or when it is malformed before it gets that deep (the loader then
 * reports the YAML error); CP_E_INVALID_ARGUMENT with "<name>:<line>:
 * nested deeper than 16 levels" otherwise; CP_E_NOMEM. */
int cp_yaml_depth_check(const char *name, const char *yaml, size_t len, cp_error *e);

#endif
