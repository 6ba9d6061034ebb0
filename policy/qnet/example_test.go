package qnet_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/policy/qnet"
	"github.com/proflow-sdn/proflow/telemetry"
)

// A trainer exports a Q-network with the metadata of the state encoder it
// trained on; a controller reads it back and evaluates it.
func Example() {
	enc := telemetry.DefaultEncoderConfig(proflow.PaperTopology())
	m, err := qnet.New([]int{enc.Dim(), 256, 256, enc.NumSwitches}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		panic(err)
	}
	meta := qnet.NewMetadata(enc)
	meta.MadeBy, meta.Seed = "example", "1"

	var file bytes.Buffer
	if err := qnet.Write(&file, m, meta); err != nil {
		panic(err)
	}
	loaded, got, err := qnet.Read(&file)
	if err != nil {
		panic(err)
	}
	q := make([]float32, loaded.OutputDim())
	if err := loaded.Forward(q, make([]float32, loaded.InputDim())); err != nil {
		panic(err)
	}
	fmt.Println("sizes:", loaded.Sizes())
	fmt.Println("layout:", got.StateLayout, "made by:", got.MadeBy)
	fmt.Println("Q-values:", len(q))
	// Output:
	// sizes: [34 256 256 4]
	// layout: proflow-state-v1 made by: example
	// Q-values: 4
}
