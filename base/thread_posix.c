/* thread_posix.c - thread.h on pthreads. */
#include "base/thread.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

struct cp_mutex {
    pthread_mutex_t m;
};
struct cp_cond {
    pthread_cond_t c;
};
struct cp_thread {
    pthread_t t;
    void (*fn)(void *);
    void *arg;
};

cp_mutex *cp_mutex_new(void)
{
    cp_mutex *m = malloc(sizeof(*m));
    if (m != NULL && pthread_mutex_init(&m->m, NULL) != 0) {
        free(m);
        return NULL;
    }
    return m;
}

void cp_mutex_free(cp_mutex *m)
{
    if (m == NULL)
        return;
    pthread_mutex_destroy(&m->m);
    free(m);
}

void cp_mutex_lock(cp_mutex *m)
{
    pthread_mutex_lock(&m->m);
}

void cp_mutex_unlock(cp_mutex *m)
{
    pthread_mutex_unlock(&m->m);
}

cp_cond *cp_cond_new(void)
{
    cp_cond *c = malloc(sizeof(*c));
    if (c == NULL)
        return NULL;
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    int rc = pthread_cond_init(&c->c, &attr);
    pthread_condattr_destroy(&attr);
    if (rc != 0) {
        free(c);
        return NULL;
    }
    return c;
}

void cp_cond_free(cp_cond *c)
{
    if (c == NULL)
        return;
    pthread_cond_destroy(&c->c);
    free(c);
}

void cp_cond_wait(cp_cond *c, cp_mutex *m)
{
    pthread_cond_wait(&c->c, &m->m);
}

int cp_cond_timedwait(cp_cond *c, cp_mutex *m, int64_t timeout_ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += timeout_ms / 1000;
    ts.tv_nsec += (timeout_ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return pthread_cond_timedwait(&c->c, &m->m, &ts) == ETIMEDOUT ? 1 : 0;
}

void cp_cond_signal(cp_cond *c)
{
    pthread_cond_signal(&c->c);
}

void cp_cond_broadcast(cp_cond *c)
{
    pthread_cond_broadcast(&c->c);
}

static void *trampoline(void *arg)
{
    cp_thread *t = arg;
    t->fn(t->arg);
    return NULL;
}

cp_thread *cp_thread_start(void (*fn)(void *), void *arg)
{
    cp_thread *t = malloc(sizeof(*t));
    if (t == NULL)
        return NULL;
    t->fn = fn;
    t->arg = arg;
    if (pthread_create(&t->t, NULL, trampoline, t) != 0) {
        free(t);
        return NULL;
    }
    return t;
}

void cp_thread_join(cp_thread *t)
{
    if (t == NULL)
        return;
    pthread_join(t->t, NULL);
    free(t);
}

int64_t cp_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t cp_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}
