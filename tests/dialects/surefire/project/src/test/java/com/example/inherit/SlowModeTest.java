package com.example.inherit;

public class SlowModeTest extends AbstractModeTest {
    @Override
    protected String mode() {
        return "slow"; // modeIsFast fails here only
    }
}
