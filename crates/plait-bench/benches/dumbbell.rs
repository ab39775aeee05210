//! Criterion benchmark of the dumbbell: simulated seconds of N bulk TCP flows. The figure of
//! merit, delivered packets per wall second, is printed by `plait bench dumbbell`; this bench
//! tracks regressions of the same workload.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use plait_core::bench::dumbbell_toml;
use plait_core::scenario::Scenario;
use plait_core::sim::build;

fn dumbbell(c: &mut Criterion) {
    let mut group = c.benchmark_group("dumbbell");
    group.sample_size(10);
    for flows in [10usize, 100] {
        let scenario = Scenario::from_toml_str(&dumbbell_toml(flows, 5.0), "<bench>", &[])
            .expect("bench scenario");
        let mut probe = build(&scenario, None).expect("build");
        probe.run();
        group.throughput(Throughput::Elements(probe.packet_counters().data_delivered));
        group.bench_with_input(BenchmarkId::from_parameter(flows), &scenario, |b, s| {
            b.iter(|| {
                let mut sim = build(s, None).expect("build");
                sim.run();
                sim.packet_counters().data_delivered
            })
        });
    }
    group.finish();
}

criterion_group!(benches, dumbbell);
criterion_main!(benches);
