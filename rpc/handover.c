/* handover.c - the hand-over list (handover.h). */
#include "rpc/handover.h"
#include "rpc/conn_internal.h"

bool cp_handover_put(cp_handover *h, cp_job *job)
{
    cp_job *head = atomic_load(&h->list);
    do
        job->post_next = head;
    while (!atomic_compare_exchange_weak(&h->list, &head, job));
    bool was = false;
    return atomic_compare_exchange_strong(&h->busy, &was, true);
}

bool cp_handover_push(cp_handover *h, cp_job *job)
{
    cp_job *head = atomic_load(&h->list);
    do
        job->post_next = head;
    while (!atomic_compare_exchange_weak(&h->list, &head, job));
    return head == NULL;
}

cp_job *cp_handover_take(cp_handover *h)
{
    cp_job *list = atomic_exchange(&h->list, NULL), *fifo = NULL;
    while (list != NULL) { /* the list is newest first */
        cp_job *next = list->post_next;
        list->post_next = fifo;
        fifo = list;
        list = next;
    }
    return fifo;
}

cp_job *cp_handover_next(const cp_job *job)
{
    return job->post_next;
}

bool cp_handover_end(cp_handover *h)
{
    atomic_store(&h->busy, false);
    /* A job put before busy was cleared found it set and was left to this
     * thread: look again. If another thread set busy first, it hands over. */
    bool was = false;
    return atomic_load(&h->list) != NULL && atomic_compare_exchange_strong(&h->busy, &was, true);
}
