/* watch.h - the Watch stream's side of a cp_conn (watch.c). Each runs
 * where the connection's calls run (conn.h). */
#ifndef CP_WATCH_H
#define CP_WATCH_H

#include "rpc/conn_internal.h"

/* Ends the stream with status after what is queued. */
void cp_watch_end(cp_conn *c, cp_stream *st, int status, const char *msg);
/* Stop or drain: NOT_SERVING, then the stream ends with OK. */
void cp_watch_drain(cp_conn *c, cp_stream *st);
/* A probe's answer: queues the status if it changed. */
void cp_watch_deliver(cp_conn *c, cp_stream *st, const cp_job *job);
/* Asks the back end again (cp_conn_expire, when next_probe is due). */
void cp_watch_probe(cp_conn *c, cp_stream *st);
/* The Watch's call starts, for the metrics: started (and its one request
 * message received) once. */
void cp_watch_started(cp_conn *c, cp_stream *st);
/* It ends, for the metrics: handled with status, once, whichever way it
 * ends; nothing for a stream that is not a started Watch. */
void cp_watch_handled(cp_conn *c, cp_stream *st, int status);

#endif
