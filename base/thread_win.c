/* thread_win.c - thread.h on Win32 SRW locks, condition variables and
 * threads. */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdlib.h>

#include "base/thread.h"

struct cp_mutex {
    SRWLOCK l;
};
struct cp_cond {
    CONDITION_VARIABLE c;
};
struct cp_thread {
    HANDLE h;
    void (*fn)(void *);
    void *arg;
};

cp_mutex *cp_mutex_new(void)
{
    cp_mutex *m = malloc(sizeof(*m));
    if (m != NULL)
        InitializeSRWLock(&m->l);
    return m;
}

void cp_mutex_free(cp_mutex *m)
{
    free(m);
}

void cp_mutex_lock(cp_mutex *m)
{
    AcquireSRWLockExclusive(&m->l);
}

void cp_mutex_unlock(cp_mutex *m)
{
    ReleaseSRWLockExclusive(&m->l);
}

cp_cond *cp_cond_new(void)
{
    cp_cond *c = malloc(sizeof(*c));
    if (c != NULL)
        InitializeConditionVariable(&c->c);
    return c;
}

void cp_cond_free(cp_cond *c)
{
    free(c);
}

void cp_cond_wait(cp_cond *c, cp_mutex *m)
{
    SleepConditionVariableSRW(&c->c, &m->l, INFINITE, 0);
}

int cp_cond_timedwait(cp_cond *c, cp_mutex *m, int64_t timeout_ms)
{
    DWORD ms = timeout_ms < 0 ? 0 : (timeout_ms > 0x7fffffff ? 0x7fffffff : (DWORD)timeout_ms);
    if (!SleepConditionVariableSRW(&c->c, &m->l, ms, 0))
        return GetLastError() == ERROR_TIMEOUT ? 1 : 0;
    return 0;
}

void cp_cond_signal(cp_cond *c)
{
    WakeConditionVariable(&c->c);
}

void cp_cond_broadcast(cp_cond *c)
{
    WakeAllConditionVariable(&c->c);
}

static DWORD WINAPI trampoline(LPVOID arg)
{
    cp_thread *t = arg;
    t->fn(t->arg);
    return 0;
}

cp_thread *cp_thread_start(void (*fn)(void *), void *arg)
{
    cp_thread *t = malloc(sizeof(*t));
    if (t == NULL)
        return NULL;
    t->fn = fn;
    t->arg = arg;
    t->h = CreateThread(NULL, 256 * 1024, trampoline, t, STACK_SIZE_PARAM_IS_A_RESERVATION, NULL);
    if (t->h == NULL) {
        free(t);
        return NULL;
    }
    return t;
}

void cp_thread_join(cp_thread *t)
{
    if (t == NULL)
        return;
    WaitForSingleObject(t->h, INFINITE);
    CloseHandle(t->h);
    free(t);
}

int64_t cp_now_ms(void)
{
    return (int64_t)GetTickCount64();
}

int64_t cp_now_us(void)
{
    /* QueryPerformanceCounter cannot fail on Windows XP and later:
     * https://learn.microsoft.com/windows/win32/api/profileapi/nf-profileapi-queryperformancecounter */
    static LARGE_INTEGER freq; /* the same for the system's lifetime */
    LARGE_INTEGER now;
    if (freq.QuadPart == 0)
        QueryPerformanceFrequency(&freq);
    QueryPerformanceCounter(&now);
    return (int64_t)(now.QuadPart / freq.QuadPart * 1000000 +
                     now.QuadPart % freq.QuadPart * 1000000 / freq.QuadPart);
}
