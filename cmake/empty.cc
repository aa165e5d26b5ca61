// An empty source: librecq.so is made of the static libraries, whole.
