{# The span filters that do not depend on the window, shared by the frame's
   predicate and minimap passes: {% include "trace/interaction/shaders/trace_filters.wgsl" %}
   after trace_span.wgsl and trace_view.wgsl. The including shader declares
   view (TraceView), category_mask, search_mask and focus (per row of its piece). #}

fn bit(mask_word: u32, i: u32) -> bool {
    return ((mask_word >> (i & 31u)) & 1u) != 0u;
}

// Whether span s (row `row` of the piece) passes the category, duration,
// search ("filter" mode) and focus ("hide" mode) filters.
fn filtered_in(s: TraceSpan, row: u32) -> bool {
    if ((view.flags & TRACE_VIEW_CATEGORIES) != 0u && !bit(category_mask[s.category >> 5u], s.category)) {
        return false;
    }
    if (trace_time_less(s.duration, view.min_duration)) {
        return false;
    }
    if ((view.flags & TRACE_VIEW_SEARCH_FILTER) != 0u && !bit(search_mask[s.name >> 5u], s.name)) {
        return false;
    }
    if ((view.flags & TRACE_VIEW_FOCUS_HIDE) != 0u && focus[row] == 0u) {
        return false;
    }
    return true;
}
