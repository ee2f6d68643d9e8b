-- interconnect-catalog DuckDB schema: the public interface (documented in docs/schema.md).
-- Every number carries its unit in its column name. Timestamps are UTC.

-- The instances block is generated from records/instance_columns.toml (python -m devtools schema).
CREATE TABLE IF NOT EXISTS instances (
    provider                  VARCHAR NOT NULL,
    instance_type             VARCHAR NOT NULL,
    name_escaped              BOOLEAN NOT NULL DEFAULT false,
    seller_kind               VARCHAR NOT NULL DEFAULT 'cloud',
    upstream_provider         VARCHAR,
    upstream_instance_type    VARCHAR,
    platform                  VARCHAR,
    preset                    VARCHAR,
    gpu_model                 VARCHAR,
    gpu_count                 DOUBLE,
    gpu_memory_gb             DOUBLE,
    gpu_memory_nominal_gb     DOUBLE,
    gpu_memory_flag           VARCHAR,
    gpu_memory_gbytes_per_s   DOUBLE,
    gpu_memory_bw_basis       VARCHAR NOT NULL,
    intra_node_link           VARCHAR NOT NULL,
    intra_node_gbytes_per_s   DOUBLE,
    intra_node_basis          VARCHAR NOT NULL,
    gpu_peer_access           VARCHAR NOT NULL DEFAULT 'unknown',
    gpu_peer_access_basis     VARCHAR NOT NULL DEFAULT 'missing',
    gpu_peer_access_evidence  VARCHAR,
    scale_up_domain_gpus      INTEGER,
    inter_node_fabric         VARCHAR NOT NULL,
    inter_node_gbits_per_s    DOUBLE,
    inter_node_gbytes_per_s   DOUBLE,
    inter_node_basis          VARCHAR NOT NULL,
    nic_count                 INTEGER,
    frontend_gbits_per_s      DOUBLE,
    frontend_nic_count        INTEGER,
    fabric_shares_frontend    BOOLEAN NOT NULL,
    missing_intra_bw          BOOLEAN NOT NULL,
    missing_inter_bw          BOOLEAN NOT NULL,
    unit_suspect              BOOLEAN NOT NULL,
    conflict                  BOOLEAN NOT NULL,
    min_usd_per_hour          DOUBLE,
    usd_per_gpu_hour          DOUBLE,
    regions                   INTEGER NOT NULL DEFAULT 0,
    price_region              VARCHAR,
    price_flag                VARCHAR,
    notes                     VARCHAR[] NOT NULL,
    source_kind               VARCHAR NOT NULL,
    source_url                VARCHAR NOT NULL,
    scraped_at                TIMESTAMP NOT NULL,
    stale                     BOOLEAN NOT NULL,
    stale_since               TIMESTAMP,
    stale_cause               VARCHAR,
    PRIMARY KEY (provider, instance_type),
    CHECK (min_usd_per_hour IS NULL OR min_usd_per_hour > 0),
    CHECK ((regions > 0) = (min_usd_per_hour IS NOT NULL)),
    CHECK ((price_region IS NOT NULL) = (min_usd_per_hour IS NOT NULL)),
    CHECK ((usd_per_gpu_hour IS NOT NULL) = (min_usd_per_hour IS NOT NULL AND gpu_count IS NOT NULL))
);

-- Every extracted, paraphrased or inferred number with the text behind it, with history: the current
-- value of a claim has valid_to NULL. `evidence` says what `quote` is (see README).
CREATE TABLE IF NOT EXISTS claims (
    provider       VARCHAR   NOT NULL,
    instance_type  VARCHAR   NOT NULL,
    field          VARCHAR   NOT NULL,  -- the instances column the claim feeds
    value          DOUBLE,              -- numeric claims, in the unit of the field's name
    value_text     VARCHAR,             -- vocabulary claims (gpu_model, link, fabric)
    unit           VARCHAR,
    basis          VARCHAR   NOT NULL,  -- stated | paraphrased | inferred | expected | measured
    qualifiers     VARCHAR   NOT NULL,  -- "up to", "8 x 400 Gbit/s", "per gpu", ...
    unit_suspect   BOOLEAN   NOT NULL,
    quote          VARCHAR   NOT NULL,  -- verbatim: the source's words; paraphrase: ours; datasheet: GPU table row
    context        VARCHAR   NOT NULL,  -- where on the page: table › column, or section
    source_url     VARCHAR   NOT NULL,  -- the document actually read (a third-party copy as itself)
    evidence       VARCHAR   NOT NULL,  -- verbatim | paraphrase | datasheet
    original_url   VARCHAR,             -- for a copy: the page it copies
    read_on        DATE,                -- paraphrase: the day a person read the source
    fetched_at     TIMESTAMP,
    valid_from     TIMESTAMP NOT NULL,
    valid_to       TIMESTAMP
);

-- Raw document bodies, content-addressed; fetches point at them.
CREATE TABLE IF NOT EXISTS documents (
    sha256  VARCHAR PRIMARY KEY,
    body    VARCHAR NOT NULL
);

-- One row per URL per refresh.
CREATE TABLE IF NOT EXISTS fetches (
    refresh_id      VARCHAR   NOT NULL,
    provider        VARCHAR   NOT NULL,
    url             VARCHAR   NOT NULL,
    status          INTEGER   NOT NULL,  -- HTTP status; 0 = no response
    fetched_at      TIMESTAMP NOT NULL,
    bytes_received  BIGINT    NOT NULL,  -- body bytes on the wire (0 for a 304)
    sha256          VARCHAR,
    etag            VARCHAR,
    last_modified   VARCHAR,
    from_cache      BOOLEAN   NOT NULL,  -- 304: the stored body was reused
    attempts        INTEGER   NOT NULL,
    error           VARCHAR,
    required        BOOLEAN   NOT NULL DEFAULT true,  -- false: the parser can do without it
    fetched_url     VARCHAR   -- the URL the body came from (after redirects); NULL before it was kept
);

-- One row per refresh run, and one per provider within it.
CREATE TABLE IF NOT EXISTS refreshes (
    refresh_id   VARCHAR   PRIMARY KEY,
    started_at   TIMESTAMP NOT NULL,
    finished_at  TIMESTAMP NOT NULL,
    mode         VARCHAR   NOT NULL,  -- live | mirror | reparse | snapshot
    exit_code    INTEGER   NOT NULL
);

CREATE TABLE IF NOT EXISTS provider_refreshes (
    refresh_id       VARCHAR   NOT NULL,
    provider         VARCHAR   NOT NULL,
    outcome          VARCHAR   NOT NULL,  -- ok | carried | curated | stale | failed | unchanged
    documents        INTEGER   NOT NULL,
    rows_before      INTEGER   NOT NULL,
    rows_after       INTEGER   NOT NULL,
    cause            VARCHAR,
    last_success_at  TIMESTAMP,
    rows_carried     INTEGER   NOT NULL DEFAULT 0,  -- rows the parse lost, kept from the last good catalog
    fields_carried   INTEGER   NOT NULL DEFAULT 0,  -- fields the parse lost in rows it still has, kept
    fields_held      INTEGER   NOT NULL DEFAULT 0,  -- figures that moved 8x or more: last good value kept
    changes_accepted BOOLEAN   NOT NULL DEFAULT false  -- published with --accept-changes: the values later jumps are held against
);

-- Published prices: one row per offer per region, as the source lists it, with history like claims
-- (the current price of an offer has valid_to NULL). Nothing averaged, nothing guessed.
CREATE TABLE IF NOT EXISTS prices (
    provider           VARCHAR   NOT NULL,  -- who sells it (a marketplace, not its upstream cloud)
    instance_type      VARCHAR   NOT NULL,
    region             VARCHAR   NOT NULL,  -- as the source names it
    usd_per_hour       DOUBLE,              -- on-demand, whole instance (in USD: published x usd_per_unit)
    spot_usd_per_hour  DOUBLE,              -- spot / preemptible, whole instance, in USD
    quote              VARCHAR   NOT NULL,  -- the source's line or cell
    context            VARCHAR   NOT NULL,
    notes              VARCHAR   NOT NULL,
    source_url         VARCHAR   NOT NULL,
    currency           VARCHAR   NOT NULL DEFAULT 'USD',  -- ISO 4217, as the source publishes it
    published_per_hour       DOUBLE,        -- on-demand, whole instance, in `currency` as published
    published_spot_per_hour  DOUBLE,        -- spot, in `currency` as published
    usd_per_unit       DOUBLE    NOT NULL DEFAULT 1,  -- the exchange_rates rate used (1 for USD)
    price_flag         VARCHAR,             -- why the price looks like a placeholder (kept, flagged)
    fetched_at         TIMESTAMP,
    valid_from         TIMESTAMP NOT NULL,
    valid_to           TIMESTAMP
);

-- The rate each non-USD price was converted at: one stated, dated rate per currency, with its source
-- (normalize/exchange_rates.csv), so a USD comparison says what it assumed.
CREATE TABLE IF NOT EXISTS exchange_rates (
    currency      VARCHAR PRIMARY KEY,  -- ISO 4217
    usd_per_unit  DOUBLE  NOT NULL,
    rate_date     DATE,
    source_url    VARCHAR,
    note          VARCHAR NOT NULL
);
CREATE TABLE IF NOT EXISTS offer_lists (
    provider         VARCHAR NOT NULL,
    url              VARCHAR NOT NULL,
    catalog_version  VARCHAR NOT NULL,  -- SkyPilot's tree: v6, v8, v9
    status           VARCHAR NOT NULL,  -- current (the tree SkyPilot reads) | frozen (older) | newer
    data_as_of       DATE,              -- NULL: no date in hand, as_of_note says why
    as_of_note       VARCHAR NOT NULL,
    stored_commit    VARCHAR NOT NULL,  -- the skypilot-catalog commit of the copy in ../shared
    newer_list       VARCHAR NOT NULL,  -- a newer list of the provider that exists, and what it holds
    PRIMARY KEY (provider, url)
);

-- What an instance is expected to deliver (a provider's health checks, topology files) and what it
-- was measured to deliver (tool outputs). Kept apart from claims: neither overwrites the other.
CREATE TABLE IF NOT EXISTS measurements (
    source          VARCHAR   NOT NULL,  -- the registered source that read it, or 'user'
    provider        VARCHAR,             -- the catalog provider it is about (NULL: not stated)
    instance_type   VARCHAR,             -- the catalog instance type it is about (NULL: not stated)
    kind            VARCHAR   NOT NULL,  -- expected | measured
    metric          VARCHAR   NOT NULL,  -- e.g. gpu_to_gpu_gbytes_per_s: the unit is in the name
    value           DOUBLE,              -- in the unit of the metric's name
    value_text      VARCHAR,             -- text metrics (nccl_transport, gpu_link)
    direction       VARCHAR,             -- one-way | two-way (GPU-to-GPU copies)
    nodes           INTEGER,
    gpus            INTEGER,
    message_bytes   BIGINT,
    port_count      INTEGER,
    tool            VARCHAR,
    tool_version    VARCHAR,
    run_at          TIMESTAMP,
    source_url      VARCHAR   NOT NULL,
    locator         VARCHAR   NOT NULL,  -- where in the source: line, JSON path
    quote           VARCHAR   NOT NULL,  -- the source's text there
    notes           VARCHAR   NOT NULL,
    fetched_at      TIMESTAMP,
    stale           BOOLEAN   NOT NULL DEFAULT false
);

-- What each parser expects of each live page (header texts), so a layout change can be checked.
CREATE TABLE IF NOT EXISTS source_layouts (
    provider  VARCHAR NOT NULL,
    url       VARCHAR NOT NULL,
    expects   VARCHAR NOT NULL
);

-- Resold offers beside the upstream cloud's own row (when the seller names it and the catalog has it):
-- a resold offer is its own row under its seller, never merged into the upstream's.
CREATE OR REPLACE VIEW resold_offers AS
    SELECT r.provider AS seller, r.seller_kind, r.instance_type,
           r.upstream_provider, r.upstream_instance_type, u.instance_type IS NOT NULL AS upstream_listed,
           r.gpu_model, r.gpu_count, u.gpu_model AS upstream_gpu_model, u.gpu_count AS upstream_gpu_count,
           r.intra_node_link, u.intra_node_link AS upstream_intra_node_link,
           r.inter_node_fabric, u.inter_node_fabric AS upstream_inter_node_fabric,
           u.inter_node_gbits_per_s AS upstream_inter_node_gbits_per_s,
           (SELECT min(p.usd_per_hour) FROM prices p WHERE p.valid_to IS NULL
              AND p.provider = r.provider AND p.instance_type = r.instance_type) AS min_usd_per_hour,
           (SELECT min(p.usd_per_hour) FROM prices p WHERE p.valid_to IS NULL
              AND p.provider = u.provider AND p.instance_type = u.instance_type) AS upstream_min_usd_per_hour
    FROM instances r
    LEFT JOIN instances u ON u.provider = r.upstream_provider AND u.instance_type = r.upstream_instance_type
    WHERE r.seller_kind <> 'cloud';

-- The current claims, and the fields where current claims disagree.
CREATE OR REPLACE VIEW current_claims AS
    SELECT * FROM claims WHERE valid_to IS NULL;

CREATE OR REPLACE VIEW current_prices AS
    SELECT * FROM prices WHERE valid_to IS NULL;

-- One list element per claim, the three lists in the same order, so values[i] is quoted by quotes[i]
-- at source_urls[i] (two claims may state the same value from different pages).
CREATE OR REPLACE VIEW claim_conflicts AS
    SELECT provider, instance_type, field,
           list(coalesce(CAST(value AS VARCHAR), value_text) ORDER BY value, value_text, quote, source_url)
               AS values,
           list(quote ORDER BY value, value_text, quote, source_url) AS quotes,
           list(source_url ORDER BY value, value_text, quote, source_url) AS source_urls
    FROM current_claims
    GROUP BY provider, instance_type, field
    HAVING count(DISTINCT coalesce(CAST(round(value, 6) AS VARCHAR), value_text)) > 1;
