"""The mechanisms an audit of 59 sampled rows against their documents found wrong or missing (issue
20), each shown on the catalog built from the real documents in ../shared."""

from __future__ import annotations

from tests.helpers import query


def _one(db, provider: str, instance_type: str, columns: str) -> tuple:
    rows = query(
        db,
        f"SELECT {columns} FROM instances "
        f"WHERE provider = '{provider}' AND instance_type = '{instance_type}'",
    )
    assert len(rows) == 1, (provider, instance_type)
    return rows[0]


def test_a_family_level_gpu_is_named_by_its_family_size_in_the_one_memory_unit(real_catalog_file):
    """DigitalOcean's SkyPilot line says 81559 MiB (85.5 GB) for an H100 whose form factor no column
    gives: the row is 'H100-80GB', and in the one unit every provider shares it is 80, as an H100 SXM's
    '80 GiB' is; a name that gives the size and no figure ('V100-32GB') gives the size."""
    cases = {
        ("digitalocean", "gpu-h100x8-640gb"): ("H100-80GB", 80.0),
        ("hyperbolic", "1x-H100-75-722"): ("H100-80GB", 80.0),
        ("ovhcloud", "t1-90"): ("V100-16GB", 16.0),
        ("ovhcloud", "t2-le-180"): ("V100-32GB", 32.0),
        ("vast", "8x-H200-32-65536"): ("H200-141GB", 141.0),
        ("verda", "1H200.141S.44V"): ("H200-141GB", 141.0),
        ("primeintellect", "datacrunch__4xV100_16GB__20__90"): ("V100-16GB", 16.0),
        ("paperspace", "V100-32Gx2"): ("V100-32GB", 32.0),
    }
    for (provider, name), (model, nominal) in cases.items():
        assert _one(
            real_catalog_file, provider, name, "gpu_model, gpu_memory_nominal_gb, gpu_memory_flag"
        ) == (
            model,
            nominal,
            None,
        ), name
    # the stated figure stays as stated
    assert _one(real_catalog_file, "digitalocean", "gpu-h100x8-640gb", "round(gpu_memory_gb, 2)") == (85.52,)


def test_google_g4_states_pcie_peer_to_peer_and_no_gpu_network_types_have_their_total(real_catalog_file):
    """Google's capture: "This approach allows GPUs that attach to the same G4 instance to exchange data
    directly over the PCIe bus" (peer access, stated); and A2, G2, G4 have no GPU network, so the
    machine's total is the only network between machines (g4-standard-192: 200 Gbps)."""
    for name in ("g4-standard-96", "g4-standard-192", "g4-standard-384"):
        access, basis, evidence = _one(
            real_catalog_file, "gcp", name, "gpu_peer_access, gpu_peer_access_basis, gpu_peer_access_evidence"
        )
        assert (access, basis) == ("yes", "stated") and "exchange data directly over the PCIe bus" in evidence
    assert _one(real_catalog_file, "gcp", "g4-standard-48", "gpu_peer_access") == ("not-applicable",)
    expected = {"g4-standard-192": 200, "g2-standard-4": 10, "a2-highgpu-4g": 50, "g2-standard-96": 100}
    for name, gbits in expected.items():
        fabric, inter, basis, frontend = _one(
            real_catalog_file,
            "gcp",
            name,
            "inter_node_fabric, inter_node_gbits_per_s, inter_node_basis, frontend_gbits_per_s",
        )
        assert (fabric, inter, basis, frontend) == ("ethernet", gbits, "stated", gbits), name
    # a fraction of a G4 GPU has no fabric named: nothing is carried to it
    assert _one(real_catalog_file, "gcp", "g4-standard-6", "inter_node_gbits_per_s") == (None,)


def test_mlperf_nics_fill_a_missing_nic_count(real_catalog_file):
    for preset in ("gpu-b200-sxm_8gpu-160vcpu-1792gb", "gpu-h200-sxm_8gpu-128vcpu-1600gb"):
        (nics, notes) = _one(real_catalog_file, "nebius", preset, "nic_count, array_to_string(notes, ' | ')")
        assert nics == 8 and "nic_count 8 expected: MLPerf Training v5.1 system description" in notes


def test_memory_that_fits_the_part_wins_over_a_page_figure_that_fits_none(real_catalog_file):
    """AWS's instance-type page says '8192 GiB (16 x 512 GiB)' for trn2.48xlarge; its Neuron page
    1,536 GiB for 16 Trainium2 chips (96 GiB each, the chip's datasheet): the row keeps the one that
    fits, the other stays a claim in conflict. trn2.3xlarge has only the page's figure: kept, flagged."""
    memory, nominal, flag, conflict = _one(
        real_catalog_file,
        "aws",
        "trn2.48xlarge",
        "round(gpu_memory_gb, 3), gpu_memory_nominal_gb, gpu_memory_flag, conflict",
    )
    assert (memory, nominal, flag, conflict) == (103.079, 96.0, None, True)
    claims = query(
        real_catalog_file,
        "SELECT round(value, 3) FROM current_claims WHERE instance_type = 'trn2.48xlarge' "
        "AND field = 'gpu_memory_gb' ORDER BY 1",
    )
    assert {c for (c,) in claims} == {103.079, 549.756}
    assert _one(real_catalog_file, "aws", "trn2.3xlarge", "gpu_memory_flag")[0].startswith("stated 549.8 GB")
