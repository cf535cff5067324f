package pipeline

// StringKind exposes stringKind to the engine-backed tests of package pipeline_test.
var StringKind = stringKind
