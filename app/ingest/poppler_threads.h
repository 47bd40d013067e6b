#pragma once

namespace cw {

// Poppler (22.x and later, see poppler work item 1800) builds its process-wide LittleCMS
// state — the sRGB and XYZ profiles, the CMS error handler — lazily in the first GfxState
// it constructs, guarded by nothing. Two threads that render or extract text for the first
// time at once corrupt the heap. Call this before a thread uses a Poppler page: the first
// call renders a one-point page of a built-in PDF, once, under a lock; later calls return at
// once. Every Poppler user in the app calls it (the page renderer, the PDF reader).
void preparePopplerForThreads();

} // namespace cw
