// The TraceViewer View uniform (80 bytes; TraceGraph.write_view writes it).
struct View {
    origin: vec2<u32>,        // window start, ns since the scene's time origin (wrapping)
    end: vec2<u32>,           // window end
    min_duration: vec2<u32>,  // shorter spans are hidden
    frame: vec2<f32>,         // render size (physical pixels)
    px_per_ns: f32,           // physical pixels per ns
    gutter: f32,              // left edge of the tracks (physical)
    top: f32,                 // top edge of the tracks (physical)
    row_height: f32,          // physical pixels per layout row
    first_row: u32,           // layout row at the top edge
    flags: u32,               // VIEW_* below
    hover: u32,               // span ID under the pointer (NO_ID: none)
    scale: f32,               // physical pixels per logical pixel
    bottom: f32,              // lower edge of the tracks (physical)
    column_px: f32,           // physical pixels per pixel column of the frame's grid
    label_px: f32,            // physical pixels a span needs to get a label (labels.wgsl)
    pad2: f32,
}
