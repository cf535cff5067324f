package tables

// The unexported rules tables_test checks against a real engine (an external test
// package: chtest's client imports query, which imports this package).
var (
	ChooseKey    = chooseKey
	InferTypes   = inferTypes
	Dominant     = dominant
	QuotePath    = quotePath
	SampleSource = sampleSource
)

const MaxSampleBytes = maxSampleBytes

var DropEngineDatabase = dropEngineDatabase
