/* ptb_ls.h: exact request boundaries for an LS program beside ptb-qosd (docs/reference/ptb-ls.md).
 * Link -lptb-ls (or dlopen libptb-ls.so); works whether or not the library was also injected with
 * CUDA_INJECTION64_PATH. Both calls act on the device current to the calling thread.
 *
 *   ptb_ls_begin();                 before the request's first launch
 *   ... the request's work in `stream` ...
 *   ptb_ls_end(stream);             after its last launch: the device marks the request done when the
 *                                   stream gets there (requests end in the order they began)
 *
 * Both return PTB_LS_OK (0) when the request was marked; any other value says why it was not (the
 * program's CUDA work is never affected). */
#ifndef PTB_LS_H
#define PTB_LS_H

#ifdef __cplusplus
extern "C" {
#endif

#define PTB_LS_OK 0
#define PTB_LS_NO_CONTEXT 1    /* no CUDA context is current to the thread */
#define PTB_LS_NO_CONTROLLER 2 /* no usable segment for the device (no ptb-qosd runs for it, or it was refused) */
#define PTB_LS_NO_SLOT 3       /* every LS client slot of the segment is taken */
#define PTB_LS_NOT_OPEN 4      /* ptb_ls_end without an open ptb_ls_begin */
#define PTB_LS_CAPTURING 5     /* the stream is capturing a graph: end it outside the capture */
#define PTB_LS_CUDA_ERROR 6    /* the stream write could not be enqueued (the host marked the request done) */

int ptb_ls_begin(void);
int ptb_ls_end(void* ptb_ls_stream);

#ifdef __cplusplus
}
#endif

#endif
