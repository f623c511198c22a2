/*
 * view_generation.c: the generation of the plugin call running, which every
 * view the runtime hands a plugin carries (lua/luasched/views.lua). Each call
 * from C into a Lua state gets a number no earlier call had; a view made in
 * a call is usable only while that call runs (a nested call, a hint run from
 * inside a bind, has its own number and gives the outer one back when it
 * returns). A view kept past its call raises an error naming the plugin
 * instead of reading or writing memory the scheduler freed or reused.
 *
 * The scheduling thread is the one that calls into Lua.
 */
#include "framework/runtime_internal.h"

static uint32_t generation_next = 1;
static uint32_t generation_current = 1;
static uint32_t call_depth;

const uint32_t *ls_view_generation(void)
{
    return &generation_current;
}

/* A new number, never 0 (a view of generation 0 is one of the plugin's own
 * memory, which lasts): the counter wraps after 2^32 calls. */
static uint32_t next_generation(void)
{
    if (++generation_next == 0)
        generation_next = 1;
    return generation_next;
}

uint32_t ls_view_generation_enter(void)
{
    uint32_t outer = generation_current;
    call_depth++;
    generation_current = next_generation();
    return outer;
}

void ls_view_generation_leave(uint32_t outer)
{
    if (call_depth)
        call_depth--;
    /* between calls no view is valid: the next call gets a new number anyway */
    generation_current = call_depth ? outer : next_generation();
}
