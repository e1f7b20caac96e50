// Linked into every stage library so that a stage with no sources yet still
// forms a valid static library.
