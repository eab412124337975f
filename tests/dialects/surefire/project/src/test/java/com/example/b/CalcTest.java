package com.example.b;

import static org.junit.Assert.assertEquals;

import org.junit.Test;

/** See com.example.a.CalcTest. */
public class CalcTest {
    @Test
    public void add() {
        assertEquals(4, 1 + 2); // fails here, passes in com.example.a
    }

    @Test
    public void divide() {
        assertEquals(3, 7 / 2);
    }
}
