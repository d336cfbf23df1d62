/* yamldepth.c - see yamldepth.h. */
#include "base/yamldepth.h"

#include <yaml.h>

int cp_yaml_depth_check(const char *name, const char *yaml, size_t len, cp_error *e)
{
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p))
        return cp_error_set(e, CP_E_NOMEM, "config: out of memory");
    yaml_parser_set_input_string(&p, (const unsigned char *)yaml, len);
    int depth = 0, rc = CP_OK;
    for (;;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&p, &ev))
            break; /* malformed: the loader says how */
        yaml_event_type_t t = ev.type;
        int line = (int)ev.start_mark.line + 1;
        yaml_event_delete(&ev);
        if (t == YAML_SEQUENCE_START_EVENT || t == YAML_MAPPING_START_EVENT) {
            if (++depth > CP_YAML_MAX_DEPTH) {
                rc = cp_error_set(e, CP_E_INVALID_ARGUMENT, "%s:%d: nested deeper than %d levels",
                                  name, line, CP_YAML_MAX_DEPTH);
                break;
            }
        } else if (t == YAML_SEQUENCE_END_EVENT || t == YAML_MAPPING_END_EVENT) {
            depth--;
        } else if (t == YAML_STREAM_END_EVENT) {
            break;
        }
    }
    yaml_parser_delete(&p);
    return rc;
}
