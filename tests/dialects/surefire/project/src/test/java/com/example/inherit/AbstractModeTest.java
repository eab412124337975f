package com.example.inherit;

import static org.junit.Assert.assertEquals;

import org.junit.Test;

/** Test methods declared once, run by two subclasses. */
public abstract class AbstractModeTest {
    protected abstract String mode();

    @Test
    public void add() {
        assertEquals(3, 1 + 2);
    }

    @Test
    public void modeIsFast() {
        assertEquals("fast", mode());
    }
}
