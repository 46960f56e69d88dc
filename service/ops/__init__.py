"""Operations: settings, rate and connection limits, metrics and the sweeper."""
