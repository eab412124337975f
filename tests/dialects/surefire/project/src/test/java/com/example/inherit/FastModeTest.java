package com.example.inherit;

public class FastModeTest extends AbstractModeTest {
    @Override
    protected String mode() {
        return "fast";
    }
}
