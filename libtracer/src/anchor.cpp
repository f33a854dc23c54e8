namespace ompdbg::tracer { int tracer_anchor = 0; }
