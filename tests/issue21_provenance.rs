//! A bandwidth typed into the explorer's "measured" field is the user's figure: saving the
//! machine profile and reading it back keeps `user`, never turns it into `measured`.

use llmbound::core::units::{BytesPerSec, Provenance, Sourced};
use llmbound::profile::Catalog;
use llmbound::profile::load::{check_machine, machine, parse};
use llmbound::profile::save::{MachineFigure, machine_profile};

#[test]
fn a_typed_measured_bandwidth_stays_user_after_save_and_reload() {
    let cat = Catalog::builtin();
    let file = cat.machine("desktop-rtx-4090").unwrap();
    let mut m = machine(&file);
    m.tiers[0].measured_bandwidth = Some(Sourced {
        value: BytesPerSec(500e9),
        provenance: Provenance::User,
        source: "typed".into(),
    });
    let saved = machine_profile(&file, "x", "x".into(), &m, &[MachineFigure::Measured(0)]);
    let text = toml::to_string(&saved).unwrap();
    assert!(!text.contains("provenance = \"measured\""), "{text}");
    let back: llmbound::profile::file::MachineFile = parse("x.toml", &text).unwrap();
    // The checks every saved or loaded profile passes (the explorer's save, `--machine
    // x.toml`) accept it: the save is not refused for keeping the user's provenance.
    check_machine("x.toml", &text, &back, Some("x")).unwrap();
    let again = machine(&back);
    let mb = again.tiers[0].measured_bandwidth.as_ref().unwrap();
    assert_eq!(mb.provenance, Provenance::User);
    assert_eq!(mb.value.0, 500e9);
}
