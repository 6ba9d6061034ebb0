package target

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/protobuf/proto"
)

// The fuzz targets feed every message the server decodes from the wire —
// WriteRequest, ReadRequest, StreamMessageRequest and
// SetForwardingPipelineConfigRequest, as protobuf bytes — through
// proto.Unmarshal into the handlers. The server must answer, never panic.
// Each input runs twice: as decoded, and with the device and election ID
// forced to the primary's, so the fuzzer reaches the per-entity checks.
// The seed corpus is under testdata/fuzz; regenerate it with
// P4RT_WRITE_CORPUS=1 go test -run TestWriteFuzzCorpus.

// fuzzServer returns a server whose device 1 has a primary with election ID 10.
func fuzzServer(t testing.TB) (*Server, *session) {
	srv, err := New(NewMemDataplane(), []uint64{1, 2}, &Options{Pipeline: leafConfig(t, 1)})
	if err != nil {
		t.Fatal(err)
	}
	sess := newSession()
	if err := srv.arbitrate(sess, &p4v1.MasterArbitrationUpdate{DeviceId: 1, ElectionId: &p4v1.Uint128{Low: 10}}); err != nil {
		t.Fatal(err)
	}
	// A path entry to collide with, read and delete.
	if _, err := srv.Write(t.Context(), &p4v1.WriteRequest{DeviceId: 1, ElectionId: &p4v1.Uint128{Low: 10},
		Updates: []*p4v1.Update{update(p4v1.Update_INSERT, pathEntry(3))}}); err != nil {
		t.Fatal(err)
	}
	return srv, sess
}

func seedWrites(t testing.TB) []proto.Message {
	eid := &p4v1.Uint128{Low: 10}
	route := &p4v1.TableEntry{TableId: tRoute, Match: []*p4v1.FieldMatch{{FieldId: 1, FieldMatchType: &p4v1.FieldMatch_Lpm{
		Lpm: &p4v1.FieldMatch_LPM{Value: ipBytes("10.0.1.0"), PrefixLen: 24}}}},
		Action: &p4v1.TableAction{Type: &p4v1.TableAction_Action{Action: &p4v1.Action{ActionId: aForward,
			Params: []*p4v1.Action_Param{{ParamId: 1, Value: []byte{1}}}}}}}
	return []proto.Message{
		&p4v1.WriteRequest{DeviceId: 1, ElectionId: eid, Updates: []*p4v1.Update{update(p4v1.Update_INSERT, pathEntry(4))}},
		&p4v1.WriteRequest{DeviceId: 1, ElectionId: eid, Updates: []*p4v1.Update{update(p4v1.Update_MODIFY, pathEntry(5))}},
		&p4v1.WriteRequest{DeviceId: 1, ElectionId: eid, Updates: []*p4v1.Update{update(p4v1.Update_DELETE, pathEntry(3))}},
		&p4v1.WriteRequest{DeviceId: 1, ElectionId: eid, Updates: []*p4v1.Update{update(p4v1.Update_INSERT, route)}},
		&p4v1.WriteRequest{DeviceId: 1, ElectionId: eid, Atomicity: p4v1.WriteRequest_ROLLBACK_ON_ERROR,
			Updates: []*p4v1.Update{update(p4v1.Update_INSERT, route), update(p4v1.Update_INSERT, pathEntry(3))}},
		&p4v1.WriteRequest{DeviceId: 1, ElectionId: eid, Updates: []*p4v1.Update{update(p4v1.Update_MODIFY,
			&p4v1.TableEntry{TableId: tPath, IsDefaultAction: true, Action: &p4v1.TableAction{Type: &p4v1.TableAction_Action{Action: &p4v1.Action{ActionId: aKeepBase}}}})}},
		&p4v1.WriteRequest{DeviceId: 1, ElectionId: eid, Updates: []*p4v1.Update{{Type: p4v1.Update_MODIFY, Entity: &p4v1.Entity{
			Entity: &p4v1.Entity_CounterEntry{CounterEntry: &p4v1.CounterEntry{CounterId: cPortRx, Index: &p4v1.Index{Index: 2}, Data: &p4v1.CounterData{ByteCount: 5}}}}}}},
		&p4v1.WriteRequest{DeviceId: 1, ElectionId: eid, Updates: []*p4v1.Update{{Type: p4v1.Update_MODIFY, Entity: &p4v1.Entity{
			Entity: &p4v1.Entity_DirectCounterEntry{DirectCounterEntry: &p4v1.DirectCounterEntry{TableEntry: pathEntry(3), Data: &p4v1.CounterData{PacketCount: 1}}}}}}},
	}
}

func seedReads() []proto.Message {
	return []proto.Message{
		&p4v1.ReadRequest{DeviceId: 1, Entities: []*p4v1.Entity{{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{}}}}},
		&p4v1.ReadRequest{DeviceId: 1, Entities: []*p4v1.Entity{{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{TableId: tPath, Metadata: []byte("proflow"), CounterData: &p4v1.CounterData{}}}}}},
		&p4v1.ReadRequest{DeviceId: 1, Entities: []*p4v1.Entity{{Entity: &p4v1.Entity_TableEntry{TableEntry: pathEntry(3)}}}},
		&p4v1.ReadRequest{DeviceId: 1, Entities: []*p4v1.Entity{{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{TableId: tRoute, IsDefaultAction: true}}}}},
		&p4v1.ReadRequest{DeviceId: 1, Entities: []*p4v1.Entity{{Entity: &p4v1.Entity_CounterEntry{CounterEntry: &p4v1.CounterEntry{CounterId: cPortTx, Index: &p4v1.Index{Index: 3}}}}}},
		&p4v1.ReadRequest{DeviceId: 1, Entities: []*p4v1.Entity{{Entity: &p4v1.Entity_DirectCounterEntry{DirectCounterEntry: &p4v1.DirectCounterEntry{TableEntry: &p4v1.TableEntry{TableId: tPath}}}}}},
		&p4v1.ReadRequest{DeviceId: 1, Entities: []*p4v1.Entity{{}, {Entity: &p4v1.Entity_MeterEntry{MeterEntry: &p4v1.MeterEntry{MeterId: 7}}}}},
	}
}

func seedStreams() []proto.Message {
	return []proto.Message{
		&p4v1.StreamMessageRequest{Update: &p4v1.StreamMessageRequest_Arbitration{Arbitration: &p4v1.MasterArbitrationUpdate{DeviceId: 1, ElectionId: &p4v1.Uint128{Low: 5}}}},
		&p4v1.StreamMessageRequest{Update: &p4v1.StreamMessageRequest_Arbitration{Arbitration: &p4v1.MasterArbitrationUpdate{DeviceId: 1, Role: &p4v1.Role{Name: "r"}, ElectionId: &p4v1.Uint128{High: 1}}}},
		&p4v1.StreamMessageRequest{Update: &p4v1.StreamMessageRequest_Packet{Packet: &p4v1.PacketOut{Payload: []byte{1, 2, 3}}}},
		&p4v1.StreamMessageRequest{Update: &p4v1.StreamMessageRequest_DigestAck{DigestAck: &p4v1.DigestListAck{DigestId: 1}}},
	}
}

func seedPipelines(t testing.TB) []proto.Message {
	eid := &p4v1.Uint128{Low: 10}
	return []proto.Message{
		&p4v1.SetForwardingPipelineConfigRequest{DeviceId: 1, ElectionId: eid, Action: p4v1.SetForwardingPipelineConfigRequest_VERIFY, Config: leafConfig(t, 2)},
		&p4v1.SetForwardingPipelineConfigRequest{DeviceId: 1, ElectionId: eid, Action: p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_COMMIT, Config: leafConfig(t, 3)},
	}
}

func addSeeds(f *testing.F, msgs []proto.Message) {
	for _, m := range msgs {
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

func FuzzWrite(f *testing.F) {
	addSeeds(f, seedWrites(f))
	f.Fuzz(func(t *testing.T, data []byte) {
		srv, _ := fuzzServer(t)
		req := new(p4v1.WriteRequest)
		if proto.Unmarshal(data, req) != nil {
			return
		}
		_, _ = srv.Write(t.Context(), req)
		req.DeviceId, req.ElectionId, req.Role = 1, &p4v1.Uint128{Low: 10}, ""
		_, _ = srv.Write(t.Context(), req)
		if _, err := srv.read(&p4v1.ReadRequest{DeviceId: 1, Entities: []*p4v1.Entity{
			{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{CounterData: &p4v1.CounterData{}}}}}}); err != nil {
			t.Fatalf("wildcard read after a write: %v", err)
		}
	})
}

func FuzzRead(f *testing.F) {
	addSeeds(f, seedReads())
	f.Fuzz(func(t *testing.T, data []byte) {
		srv, _ := fuzzServer(t)
		req := new(p4v1.ReadRequest)
		if proto.Unmarshal(data, req) != nil {
			return
		}
		_, _ = srv.read(req)
		req.DeviceId = 1
		_, _ = srv.read(req)
	})
}

func FuzzStream(f *testing.F) {
	addSeeds(f, seedStreams())
	f.Fuzz(func(t *testing.T, data []byte) {
		srv, primary := fuzzServer(t)
		req := new(p4v1.StreamMessageRequest)
		if proto.Unmarshal(data, req) != nil {
			return
		}
		for _, sess := range []*session{newSession(), primary} {
			_ = srv.handleStream(sess, req)
			_ = srv.handleStream(sess, req)
			srv.detach(sess)
		}
	})
}

func FuzzSetPipeline(f *testing.F) {
	addSeeds(f, seedPipelines(f))
	f.Fuzz(func(t *testing.T, data []byte) {
		srv, _ := fuzzServer(t)
		req := new(p4v1.SetForwardingPipelineConfigRequest)
		if proto.Unmarshal(data, req) != nil {
			return
		}
		_, _ = srv.SetForwardingPipelineConfig(t.Context(), req)
		req.DeviceId, req.ElectionId, req.Role = 1, &p4v1.Uint128{Low: 10}, ""
		_, _ = srv.SetForwardingPipelineConfig(t.Context(), req)
		for _, w := range seedWrites(t) {
			_, _ = srv.Write(t.Context(), w.(*p4v1.WriteRequest))
		}
		for _, r := range seedReads() {
			_, _ = srv.read(r.(*p4v1.ReadRequest))
		}
	})
}

// TestWriteFuzzCorpus writes the seeds above into testdata/fuzz, in the
// format of go test's fuzz cache, when P4RT_WRITE_CORPUS is set.
func TestWriteFuzzCorpus(t *testing.T) {
	if os.Getenv("P4RT_WRITE_CORPUS") == "" {
		t.Skip("set P4RT_WRITE_CORPUS=1 to regenerate testdata/fuzz")
	}
	for name, msgs := range map[string][]proto.Message{
		"FuzzWrite": seedWrites(t), "FuzzRead": seedReads(), "FuzzStream": seedStreams(), "FuzzSetPipeline": seedPipelines(t),
	} {
		dir := filepath.Join("testdata", "fuzz", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for i, m := range msgs {
			b, err := proto.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			body := "go test fuzz v1\n[]byte(" + strconv.Quote(string(b)) + ")\n"
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed-%02d", i)), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
